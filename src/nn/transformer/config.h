#pragma once
// Hyper-parameters of the Transformer (fairseq's argument names) and the builders every stack shares.
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "nn/embedding.h"
#include "nn/linear.h"

namespace nl {

/// Hyper-parameters of a Transformer (fairseq's argument names).
struct TransformerConfig {
  int64_t src_vocab = 0, tgt_vocab = 0;  ///< dictionary sizes (specials included)
  int64_t padding_idx = 1;               ///< fairseq's <pad>
  int64_t d_model = 512;                 ///< encoder_embed_dim = decoder_embed_dim
  int64_t n_heads = 8;
  int64_t ffn_dim = 2048;                ///< encoder_ffn_embed_dim = decoder_ffn_embed_dim
  int64_t encoder_layers = 6, decoder_layers = 6;
  double dropout = 0.1, attention_dropout = 0.0, activation_dropout = 0.0;
  std::string activation = "relu";      ///< "relu" | "gelu"
  bool normalize_before = false;         ///< pre-norm (true) or post-norm (false, the original)
  std::string norm = "layernorm";        ///< any name of norm_names(): the default of both stacks (below)
  nlohmann::json norm_options;           ///< passed to make_norm (e.g. {"C": 2, "impl": "fused"})
  /// The encoder's norm; "" = `norm`.
  std::string encoder_norm;
  /// The decoder's norm; "" = `norm`, except that a batch-statistic `norm` (batchnorm, powernorm-v,
  /// powernorm) stays in the encoder and the decoder gets "layernorm", as the released PowerNorm code
  /// is run (seed-code.md §2.8: `train-iwslt14.sh power power layer layer`).
  std::string decoder_norm;
  /// make_norm options of each stack; null = `norm_options` (as given when the stack's norm is `norm`,
  /// restricted to the keys that stack's norm accepts when it is another). make_norm checks them.
  nlohmann::json encoder_norm_options, decoder_norm_options;
  /// Batch statistics in a causal decoder leak future tokens (Shen et al. 2020, Sec. 5.1), so validate()
  /// refuses a batch-statistic decoder norm unless this is set.
  bool allow_decoder_batch_stats = false;
  /// warmup_iters of the two FINAL stack norms when their norm takes that option (powernorm): the
  /// released code builds them with NormSelect's default 1000, while per-layer norms get
  /// --warmup-updates through the options (seed-code.md §2.7).
  int64_t final_norm_warmup_iters = 1000;
  /// "all": every norm slot uses `norm`; "final": only the two final stack norms use `norm` and the
  /// layer norms are plain layernorm (the released AdaNorm code's placement, seed-code.md §1.3).
  /// "final" needs normalize_before (post-norm stacks have no final norm).
  std::string norm_placement = "all";
  bool learned_pos = false;              ///< learned instead of sinusoidal positions
  int64_t max_source_positions = 1024, max_target_positions = 1024;
  bool share_decoder_input_output_embed = false;
  bool share_all_embeddings = false;     ///< one table for source, target and output (needs src_vocab == tgt_vocab)
  bool no_scale_embedding = false;
  std::string attention_impl = "fused";  ///< "fused" (nl::attention) | "composite" (nl::attention_composite)
  DType dtype = DType::Float32;          ///< parameter dtype (Float64 for gradient checks)
  /// The encoder's resolved norm name (see encoder_norm).
  std::string encoder_norm_name() const;
  /// The decoder's resolved norm name (see decoder_norm).
  std::string decoder_norm_name() const;
  /// The resolved make_norm options of the encoder / decoder norm (see encoder_norm_options). Every
  /// slot also gets "layer_scale_groups" = n_heads when its norm takes it and the options leave it
  /// unset (NormSelect passes the head count, seed-code.md §2.1).
  nlohmann::json encoder_norm_opts() const;
  nlohmann::json decoder_norm_opts() const;
  /// Throws std::invalid_argument naming the bad field and the fix (d_model % n_heads, vocab < 4, a
  /// batch-statistic decoder norm without allow_decoder_batch_stats, ...).
  void validate() const;
  /// The checks of the fields an encoder alone reads (everything but tgt_vocab, decoder_layers,
  /// max_target_positions and the sharing flags); validate() runs it too.
  void validate_encoder() const;
};

namespace transformer_detail {
/// Which stack a norm slot belongs to.
enum class Side { Encoder, Decoder };
/// The norm of a per-layer slot: the side's norm (encoder_norm_name / decoder_norm_name) with its
/// options with placement "all", plain layernorm with "final".
std::shared_ptr<Module> make_layer_norm(const TransformerConfig& cfg, Side side);
/// The final norm of a pre-norm stack: always the side's norm and options, with warmup_iters =
/// cfg.final_norm_warmup_iters when the norm takes it.
std::shared_ptr<Module> make_final_norm(const TransformerConfig& cfg, Side side);
/// The padding mask of a norm slot whose input is x [B, T, D]: `pad` [B, Tk] itself when Tk == T, its
/// last T columns in an incremental decoder step (Tk counts the cached keys too); undefined stays
/// undefined.
Tensor slot_mask(const Tensor& pad, const Variable& x);
/// fairseq's Embedding(): N(0, d^-0.5) with a zero padding row.
std::shared_ptr<Embedding> make_token_embedding(int64_t vocab, const TransformerConfig& cfg);
/// fairseq's Linear(): xavier_uniform weight, zero bias.
std::shared_ptr<Linear> make_xavier_linear(int64_t in, int64_t out);
/// The Transformer FFN fc2(dropout(act(fc1(x)), p)) (Vaswani et al. 2017, Eq. 2, with fairseq's
/// activation dropout; act by name, "relu" | "gelu"). With ReLU, and no forward hook on fc1 or fc2, it is
/// one op (ffn_relu) that keeps the hidden activations in cache: the same values. x [..., D] -> [..., D].
Variable ffn_forward(const std::string& activation, Linear& fc1, Linear& fc2, const Variable& x, double p,
                     bool training);
/// Throws std::invalid_argument unless tokens is int64 [B, T] with 1 <= T <= max_positions; `what` is
/// "source" or "target" (naming the --max-*-positions flag in the message).
void check_tokens(const Tensor& tokens, int64_t max_positions, const char* what);
}  // namespace transformer_detail

}  // namespace nl
