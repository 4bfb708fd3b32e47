#pragma once
// A decoder-only Transformer language model in the style of Transformer-XL (Dai et al. 2019; the
// released pytorch/mem_transformer.py MemTransformerLM with attn_type 0, div_val 1, no adaptive
// softmax): token embeddings scaled by sqrt(d_model) and tied to the output layer (plus an output
// bias), relative positional attention (rel_attention.h) with the learned biases u, v shared by all
// layers, post-norm (the code's default) or pre-norm layers, and segment-level recurrence: every
// layer attends to a memory of the last `mem_len` hidden states that entered it, carried from segment
// to segment WITHOUT gradient (the new memory passes through nl::detach). mem_len 0 is a plain causal
// Transformer LM with relative positions (the PowerNorm PTB baseline, ni-pn-details.md §6.3).
// Every norm slot takes any norm name (TransformerConfig's decoder side). Shapes: tokens [B, T] int64,
// hidden states [B, T, D], memory [B, M, D] per layer, logits [B, T, V].
#include <vector>

#include "nn/transformer/config.h"
#include "nn/transformer/rel_attention.h"

namespace nl {

/// The model's hyper-parameters: `base` gives tgt_vocab (the vocabulary), d_model, n_heads, ffn_dim,
/// decoder_layers, dropout (embeddings, positions, residual branches, output), attention_dropout,
/// activation_dropout (inside the FFN; the code uses `dropout` there), activation, normalize_before,
/// the decoder-side norm fields (decoder_norm_name() names every slot's norm), allow_decoder_batch_stats
/// and dtype.
struct XLConfig {
  TransformerConfig base;
  int64_t d_head = 0;   ///< per-head width; 0 = d_model / n_heads
  int64_t mem_len = 0;  ///< hidden states kept per layer for the next segment (training default)
  /// d_head resolved.
  int64_t head_dim() const { return d_head > 0 ? d_head : base.d_model / base.n_heads; }
  /// base.validate() plus d_head >= 0, mem_len >= 0 and an even d_model; throws std::invalid_argument.
  void validate() const;
};

/// One layer: relative attention over [memory; h], then the FFN, each as a residual block with a norm
/// (post-norm: x = norm(x + drop(f(x))); pre-norm: x = x + drop(f(norm(x))), where the attention's
/// norm sees the memory too, as the code's pre_lnorm). Parameters: attn, attn_layer_norm, fc1, fc2
/// (N(0, 0.02) weights, zero biases, the code's init), final_layer_norm.
class XLLayer : public Module {
 public:
  explicit XLLayer(const XLConfig& cfg);
  /// x [B, T, D], mem [B, M, D] or undefined, pos [M + T, D], u, v [H, dh], pad_mask [B, T] (!= 0 =
  /// padding; may be undefined; reaches the batch-statistic norms) -> [B, T, D].
  Variable forward(const Variable& x, const Variable& mem, const Variable& pos, const Variable& u, const Variable& v,
                   const Tensor& pad_mask);
  std::shared_ptr<RelMultiheadAttention> attn;
  std::shared_ptr<Module> attn_layer_norm, final_layer_norm;
  std::shared_ptr<Linear> fc1, fc2;

 private:
  double dropout_p_, activation_dropout_p_;
  std::string activation_;
  bool pre_norm_;
};

/// What XLModel::forward returns: logits and the memory for the next segment.
struct XLOutput {
  Variable logits;               ///< [B, T, V]; bfloat16 under autocast (the loss reads it with float32 math)
  std::vector<Tensor> memory;    ///< one [B, min(M + T, mem_len), D] per layer; empty when mem_len = 0
};

/// The language model (see the file comment). Children: embed_tokens (N(0, 0.02)), layers, layer_norm
/// (pre-norm only); parameters r_w_bias (u) and r_r_bias (v), [H, dh], N(0, 0.02), and out_bias [V]
/// (zero). Throws std::invalid_argument from cfg.validate().
class XLModel : public Module {
 public:
  explicit XLModel(const XLConfig& cfg);
  /// tokens [B, T]; memory: empty (no memory) or one [B, M, D] tensor per layer (from the previous
  /// call's XLOutput); pad_mask [B, T] (!= 0 = padding, may be undefined; only batch-statistic norms
  /// read it, padding must come after the real tokens of its row, where causality hides it);
  /// mem_len: the memory length to keep (-1 = cfg.mem_len). Throws std::invalid_argument on bad
  /// shapes or a memory that does not match the batch.
  XLOutput forward(const Tensor& tokens, const std::vector<Tensor>& memory = {}, const Tensor& pad_mask = {},
                   int64_t mem_len = -1);
  const XLConfig& config() const { return cfg_; }
  std::shared_ptr<Embedding> embed_tokens;
  std::vector<std::shared_ptr<XLLayer>> layer_list;
  std::shared_ptr<Module> layer_norm;  ///< the final norm (pre-norm only; the code has none: see docs/task-lm.md)
  Variable r_w_bias, r_r_bias, out_bias;

 private:
  XLConfig cfg_;
  CachedConstant positions_;  ///< xl_relative_positions(M + T, D) on the device
};

}  // namespace nl
