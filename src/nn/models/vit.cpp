// The small Vision Transformer; architecture and sources in vit.h.
#include "nn/models/vit.h"

#include <stdexcept>

#include "autograd/functions.h"
#include "nn/init.h"
#include "nn/norm/masked_norm.h"

namespace nl {

namespace {
[[noreturn]] void bad(const std::string& msg) { throw std::invalid_argument("VisionTransformer: " + msg); }

// The encoder-layer hyper-parameters of a ViT (pre-norm, GELU, no vocabulary).
TransformerConfig layer_config(const VitConfig& c) {
  if (c.image_size < 1 || c.in_channels < 1 || c.patch < 1 || c.layers < 1 || c.ffn_dim < 1 || c.classes < 1)
    bad("image_size, in_channels, patch, layers, ffn_dim and classes must be >= 1");
  if (c.image_size % c.patch != 0)
    bad("patch " + std::to_string(c.patch) + " must divide image_size " + std::to_string(c.image_size) +
        ": pick a divisor (CIFAR 32: 2, 4, 8, 16)");
  if (c.d_model < 1 || c.n_heads < 1 || c.d_model % c.n_heads != 0)
    bad("d_model (" + std::to_string(c.d_model) + ") must be a positive multiple of n_heads (" +
        std::to_string(c.n_heads) + "): change --d-model or --n-heads");
  for (double p : {c.dropout, c.attention_dropout})
    if (!(p >= 0 && p < 1)) bad("dropout and attention_dropout must be in [0, 1), got " + std::to_string(p));
  TransformerConfig t;
  t.d_model = c.d_model;
  t.n_heads = c.n_heads;
  t.ffn_dim = c.ffn_dim;
  t.encoder_layers = c.layers;
  t.dropout = c.dropout;
  t.attention_dropout = c.attention_dropout;
  t.activation = "gelu";
  t.normalize_before = true;
  t.norm = c.norm;
  t.norm_options = c.norm_options;
  return t;
}
}  // namespace

VisionTransformer::VisionTransformer(const VitConfig& cfg) : Module("VisionTransformer"), cfg_(cfg) {
  const TransformerConfig t = layer_config(cfg);
  patch_embed = register_module("patch_embed", std::make_shared<Conv2d>(cfg.in_channels, cfg.d_model, cfg.patch, cfg.patch));
  Tensor cls = Tensor::zeros({1, 1, cfg.d_model}), pos = Tensor::zeros({1, num_tokens(), cfg.d_model});
  init::normal_(cls, 0.0, 0.02);
  init::normal_(pos, 0.0, 0.02);
  cls_token = register_parameter("cls_token", cls);
  pos_embed = register_parameter("pos_embed", pos);
  auto layers = register_module("layers", std::make_shared<Module>("ModuleList"));
  for (int64_t i = 0; i < cfg.layers; ++i)
    layer_list.push_back(layers->register_module(std::to_string(i), std::make_shared<TransformerEncoderLayer>(t)));
  layer_norm = register_module("layer_norm", transformer_detail::make_final_norm(t, transformer_detail::Side::Encoder));
  head = register_module("head", transformer_detail::make_xavier_linear(cfg.d_model, cfg.classes));
}

Variable VisionTransformer::forward(const Variable& x) {
  const int64_t s = cfg_.image_size;
  if (x.dim() != 4 || x.size(1) != cfg_.in_channels || x.size(2) != s || x.size(3) != s)
    throw std::invalid_argument("VisionTransformer: input must be images [B, " + std::to_string(cfg_.in_channels) + ", " +
                                std::to_string(s) + ", " + std::to_string(s) + "], got " + shape_str(x.shape()));
  const int64_t B = x.size(0), D = cfg_.d_model;
  Variable p = (*patch_embed)(x);                                                    // [B, D, H/p, W/p]
  p = transpose(reshape(p, {B, D, num_tokens() - 1}), 1, 2);                         // [B, N, D]
  Variable z = add(cat({expand(cls_token, {B, 1, D}), p}, 1), pos_embed);            // Eq. 1
  z = dropout(z, cfg_.dropout, is_training());
  for (auto& layer : layer_list) z = (*layer)(z, Tensor());                          // Eq. 2-3
  z = norm_forward(*layer_norm, z, Tensor());                                        // Eq. 4
  return (*head)(reshape(contiguous(slice(z, 1, 0, 1)), {B, D}));  // the class token
}

}  // namespace nl
