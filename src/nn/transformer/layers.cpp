#include "nn/transformer/layers.h"

#include "nn/norm/masked_norm.h"

namespace nl {

using namespace transformer_detail;

namespace {
std::shared_ptr<MultiheadAttention> make_attention(const TransformerConfig& cfg) {
  return std::make_shared<MultiheadAttention>(cfg.d_model, cfg.n_heads, cfg.attention_dropout, true, 0, 0,
                                              cfg.attention_impl);
}
}  // namespace

TransformerLayerBase::TransformerLayerBase(std::string type_name, const TransformerConfig& cfg)
    : Module(std::move(type_name)),
      dropout_p(cfg.dropout),
      activation_dropout_p(cfg.activation_dropout),
      activation(cfg.activation),
      normalize_before(cfg.normalize_before) {}

Variable TransformerLayerBase::residual(const Variable& x, Module& norm, const Tensor& pad_mask,
                                        const std::function<Variable(const Variable&)>& f) {
  const Tensor m = slot_mask(pad_mask, x);
  Variable y = dropout_add(x, f(normalize_before ? norm_forward(norm, x, m) : x), dropout_p, is_training());
  return normalize_before ? y : norm_forward(norm, y, m);
}

Variable TransformerLayerBase::feed_forward(const Variable& x) {
  return ffn_forward(activation, *fc1, *fc2, x, activation_dropout_p, is_training());
}

// Registration order follows fairseq's __init__ so state_dict keys read alike.
TransformerEncoderLayer::TransformerEncoderLayer(const TransformerConfig& cfg)
    : TransformerLayerBase("TransformerEncoderLayer", cfg) {
  self_attn = register_module("self_attn", make_attention(cfg));
  self_attn_layer_norm = register_module("self_attn_layer_norm", make_layer_norm(cfg, Side::Encoder));
  fc1 = register_module("fc1", make_xavier_linear(cfg.d_model, cfg.ffn_dim));
  fc2 = register_module("fc2", make_xavier_linear(cfg.ffn_dim, cfg.d_model));
  final_layer_norm = register_module("final_layer_norm", make_layer_norm(cfg, Side::Encoder));
}

Variable TransformerEncoderLayer::forward(const Variable& x, const Tensor& padding_mask) {
  MhaOptions o;
  o.key_padding_mask = padding_mask;
  Variable h = residual(x, *self_attn_layer_norm, padding_mask,
                        [&](const Variable& a) { return (*self_attn)(a, a, a, o); });
  return residual(h, *final_layer_norm, padding_mask, [&](const Variable& a) { return feed_forward(a); });
}

Variable TransformerEncoderLayer::operator()(const Variable& x, const Tensor& padding_mask) {
  Variable y = forward(x, padding_mask);
  run_forward_hooks({x}, y);
  return y;
}

TransformerDecoderLayer::TransformerDecoderLayer(const TransformerConfig& cfg)
    : TransformerLayerBase("TransformerDecoderLayer", cfg) {
  self_attn = register_module("self_attn", make_attention(cfg));
  self_attn_layer_norm = register_module("self_attn_layer_norm", make_layer_norm(cfg, Side::Decoder));
  encoder_attn = register_module("encoder_attn", make_attention(cfg));
  encoder_attn_layer_norm = register_module("encoder_attn_layer_norm", make_layer_norm(cfg, Side::Decoder));
  fc1 = register_module("fc1", make_xavier_linear(cfg.d_model, cfg.ffn_dim));
  fc2 = register_module("fc2", make_xavier_linear(cfg.ffn_dim, cfg.d_model));
  final_layer_norm = register_module("final_layer_norm", make_layer_norm(cfg, Side::Decoder));
}

Variable TransformerDecoderLayer::forward(const Variable& x, const Variable& enc, const Tensor& enc_padding_mask,
                                          const Tensor& self_padding_mask, IncrementalState::Entry* self_cache,
                                          IncrementalState::Entry* enc_cache) {
  MhaOptions so;
  so.key_padding_mask = self_padding_mask;
  so.causal = true;
  so.cache = self_cache;
  MhaOptions eo;
  eo.key_padding_mask = enc_padding_mask;
  eo.cache = enc_cache;
  eo.static_kv = true;
  // All three norms see target positions, so all take the target mask (the released code passes the
  // encoder's mask to encoder_attn_layer_norm in post-norm, a latent bug: seed-code.md §2.5).
  const Tensor& m = self_padding_mask;
  Variable h = residual(x, *self_attn_layer_norm, m, [&](const Variable& a) { return (*self_attn)(a, a, a, so); });
  h = residual(h, *encoder_attn_layer_norm, m, [&](const Variable& a) { return (*encoder_attn)(a, enc, enc, eo); });
  return residual(h, *final_layer_norm, m, [&](const Variable& a) { return feed_forward(a); });
}

Variable TransformerDecoderLayer::operator()(const Variable& x, const Variable& enc, const Tensor& enc_padding_mask,
                                             const Tensor& self_padding_mask, IncrementalState::Entry* self_cache,
                                             IncrementalState::Entry* enc_cache) {
  Variable y = forward(x, enc, enc_padding_mask, self_padding_mask, self_cache, enc_cache);
  run_forward_hooks({x, enc}, y);
  return y;
}

}  // namespace nl
