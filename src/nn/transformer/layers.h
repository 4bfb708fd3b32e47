#pragma once
// Transformer encoder and decoder layers as fairseq's TransformerEncoderLayer / TransformerDecoderLayer
// (fairseq/modules/transformer_layer.py; Vaswani et al. 2017, Sec. 3.1). Each sub-block is
//   post-norm (normalize_before = false, the paper): x = norm(x + dropout(f(x)))
//   pre-norm  (normalize_before = true):             x = x + dropout(f(norm(x)))
// with f = self-attention, encoder attention (decoder only) or the FFN fc2(act_dropout(act(fc1(x)))).
// Shapes: x [B, T, D]. Every norm runs through nl::norm_forward with the padding mask of the tokens it
// sees (the source mask in the encoder, the target mask in the decoder; Shen et al. 2020 Sec. 3), so a
// batch-statistic norm (masked_norm.h) leaves pads out of its statistics. Parameter names follow fairseq (self_attn, self_attn_layer_norm, encoder_attn,
// encoder_attn_layer_norm, fc1, fc2, final_layer_norm).
#include <functional>

#include "nn/attention.h"
#include "nn/transformer/config.h"

namespace nl {

/// Common parts of both layer kinds: the FFN and the residual wrapper.
class TransformerLayerBase : public Module {
 public:
  std::shared_ptr<Linear> fc1, fc2;  ///< D -> ffn_dim -> D, xavier_uniform weights, zero biases
  std::shared_ptr<Module> final_layer_norm;

 protected:
  TransformerLayerBase(std::string type_name, const TransformerConfig& cfg);
  /// x + dropout(f(norm(x))) in pre-norm, norm(x + dropout(f(x))) in post-norm; the norm gets pad_mask
  /// ([B, T] or [B, Tk] with the last T columns used, != 0 = pad; may be undefined) via norm_forward.
  Variable residual(const Variable& x, Module& norm, const Tensor& pad_mask,
                    const std::function<Variable(const Variable&)>& f);
  /// fc2(activation_dropout(act(fc1(x)))).
  Variable feed_forward(const Variable& x);
  double dropout_p, activation_dropout_p;
  std::string activation;
  bool normalize_before;
};

/// One encoder layer: self-attention then FFN. Init: see MultiheadAttention and fc1/fc2.
class TransformerEncoderLayer : public TransformerLayerBase {
 public:
  explicit TransformerEncoderLayer(const TransformerConfig& cfg);
  /// x [B, T, D], padding_mask [B, T] (!= 0 = pad; may be undefined) -> [B, T, D]. The mask reaches
  /// the self-attention keys and both norms.
  Variable forward(const Variable& x, const Tensor& padding_mask);
  /// forward, then the forward hooks with inputs {x}.
  Variable operator()(const Variable& x, const Tensor& padding_mask);
  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Module> self_attn_layer_norm;
};

/// One decoder layer: causal self-attention, attention over the encoder output, FFN.
class TransformerDecoderLayer : public TransformerLayerBase {
 public:
  explicit TransformerDecoderLayer(const TransformerConfig& cfg);
  /// x [B, T, D] (T = 1 in an incremental step), enc [B, S, D] with enc_padding_mask [B, S];
  /// self_padding_mask [B, Tk] over all decoder keys (cached ones included; may be undefined); its last
  /// T columns are the padding mask of all three norms (the target side's).
  /// self_cache / enc_cache: the IncrementalState entries of this layer, or null for a full pass.
  Variable forward(const Variable& x, const Variable& enc, const Tensor& enc_padding_mask,
                   const Tensor& self_padding_mask, IncrementalState::Entry* self_cache = nullptr,
                   IncrementalState::Entry* enc_cache = nullptr);
  /// forward, then the forward hooks with inputs {x, enc}.
  Variable operator()(const Variable& x, const Variable& enc, const Tensor& enc_padding_mask,
                      const Tensor& self_padding_mask, IncrementalState::Entry* self_cache = nullptr,
                      IncrementalState::Entry* enc_cache = nullptr);
  std::shared_ptr<MultiheadAttention> self_attn, encoder_attn;
  std::shared_ptr<Module> self_attn_layer_norm, encoder_attn_layer_norm;
};

}  // namespace nl
