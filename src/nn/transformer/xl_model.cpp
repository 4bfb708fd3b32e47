#include "nn/transformer/xl_model.h"

#include <cmath>
#include <stdexcept>

#include "autograd/functions.h"
#include "nn/embedding.h"
#include "nn/init.h"
#include "nn/norm/masked_norm.h"

namespace nl {

using namespace transformer_detail;

void XLConfig::validate() const {
  base.validate();
  if (d_head < 0) throw std::invalid_argument("XLConfig: d_head must be >= 0 (0 = d_model / n_heads), got " + std::to_string(d_head));
  if (mem_len < 0) throw std::invalid_argument("XLConfig: mem_len must be >= 0, got " + std::to_string(mem_len));
  if (base.d_model % 2 != 0)
    throw std::invalid_argument("XLConfig: the sinusoidal relative positions need an even d_model, got " +
                                std::to_string(base.d_model) + ": change --d-model");
}

namespace {
// The code's init: weights N(0, 0.02), biases 0.
std::shared_ptr<Linear> normal_linear(int64_t in, int64_t out) {
  auto l = std::make_shared<Linear>(in, out, true);
  NoGradGuard ng;
  Tensor w = l->weight.data(), b = l->bias.data();
  init::normal_(w, 0.0, 0.02);
  init::zeros_(b);
  return l;
}
// [B, M] zeros before pad [B, T]: the mask of [memory; h] (memory rows are never padding).
Tensor extend_mask(const Tensor& pad, int64_t M) {
  if (!pad.defined() || M == 0) return pad;
  return cat(std::vector<Tensor>{Tensor::zeros({pad.size(0), M}, pad.dtype(), pad.device()), pad}, 1);
}
}  // namespace

XLLayer::XLLayer(const XLConfig& cfg)
    : Module("XLLayer"),
      dropout_p_(cfg.base.dropout),
      activation_dropout_p_(cfg.base.activation_dropout),
      activation_(cfg.base.activation),
      pre_norm_(cfg.base.normalize_before) {
  const int64_t D = cfg.base.d_model;
  attn = register_module("attn", std::make_shared<RelMultiheadAttention>(D, cfg.base.n_heads, cfg.head_dim(),
                                                                          cfg.base.attention_dropout));
  attn_layer_norm = register_module("attn_layer_norm", make_layer_norm(cfg.base, Side::Decoder));
  fc1 = register_module("fc1", normal_linear(D, cfg.base.ffn_dim));
  fc2 = register_module("fc2", normal_linear(cfg.base.ffn_dim, D));
  final_layer_norm = register_module("final_layer_norm", make_layer_norm(cfg.base, Side::Decoder));
}

Variable XLLayer::forward(const Variable& x, const Variable& mem, const Variable& pos, const Variable& u,
                          const Variable& v, const Tensor& pad) {
  const bool train = is_training();
  const int64_t M = mem.defined() ? mem.size(1) : 0, K = M + x.size(1);
  Variable h;
  if (pre_norm_) {
    Variable n = norm_forward(*attn_layer_norm, M > 0 ? cat({mem, x}, 1) : x, extend_mask(pad, M));
    Variable a = attn->forward(M > 0 ? slice(n, 1, M, K) : n, M > 0 ? slice(n, 1, 0, M) : Variable(), pos, u, v);
    h = dropout_add(x, a, dropout_p_, train);
  } else {
    h = norm_forward(*attn_layer_norm, dropout_add(x, attn->forward(x, mem, pos, u, v), dropout_p_, train), pad);
  }
  auto ffn = [&](const Variable& a) { return ffn_forward(activation_, *fc1, *fc2, a, activation_dropout_p_, train); };
  if (pre_norm_) return dropout_add(h, ffn(norm_forward(*final_layer_norm, h, pad)), dropout_p_, train);
  return norm_forward(*final_layer_norm, dropout_add(h, ffn(h), dropout_p_, train), pad);
}

XLModel::XLModel(const XLConfig& cfg) : Module("XLModel"), cfg_(cfg) {
  cfg.validate();
  const TransformerConfig& b = cfg.base;
  const int64_t D = b.d_model, H = b.n_heads, dh = cfg.head_dim();
  embed_tokens = register_module("embed_tokens", std::make_shared<Embedding>(b.tgt_vocab, D));
  auto layers = std::make_shared<Module>("ModuleList");
  for (int64_t i = 0; i < b.decoder_layers; ++i)
    layer_list.push_back(layers->register_module(std::to_string(i), std::make_shared<XLLayer>(cfg)));
  register_module("layers", layers);
  if (b.normalize_before) layer_norm = register_module("layer_norm", make_final_norm(b, Side::Decoder));
  r_w_bias = register_parameter("r_w_bias", Tensor::zeros({H, dh}));
  r_r_bias = register_parameter("r_r_bias", Tensor::zeros({H, dh}));
  out_bias = register_parameter("out_bias", Tensor::zeros({b.tgt_vocab}));
  {
    NoGradGuard ng;
    for (Variable* p : {&embed_tokens->weight, &r_w_bias, &r_r_bias}) {
      Tensor t = p->data();
      init::normal_(t, 0.0, 0.02);
    }
  }
  to(b.dtype);
}

XLOutput XLModel::forward(const Tensor& tokens, const std::vector<Tensor>& memory, const Tensor& pad_mask,
                          int64_t mem_len) {
  const int64_t L = (int64_t)layer_list.size(), D = cfg_.base.d_model;
  if (!tokens.defined() || tokens.dtype() != DType::Int64 || tokens.dim() != 2 || tokens.size(1) < 1)
    throw std::invalid_argument("XLModel: tokens must be int64 [B, T] with T >= 1, got " +
                                (tokens.defined() ? dtype_name(tokens.dtype()) + " " + shape_str(tokens.shape())
                                                  : std::string("undefined")));
  const int64_t B = tokens.size(0), T = tokens.size(1);
  if (!memory.empty() && (int64_t)memory.size() != L)
    throw std::invalid_argument("XLModel: memory has " + std::to_string(memory.size()) + " entries but the model has " +
                                std::to_string(L) + " layers; pass the previous call's XLOutput::memory or none");
  const int64_t M = memory.empty() ? 0 : memory[0].size(1);
  for (const Tensor& m : memory)
    if (m.dim() != 3 || m.size(0) != B || m.size(1) != M || m.size(2) != D)
      throw std::invalid_argument("XLModel: every memory entry must be [B, M, D] = [" + std::to_string(B) + ", " +
                                  std::to_string(M) + ", " + std::to_string(D) + "], got " + shape_str(m.shape()) +
                                  "; reset the memory when the batch size changes");
  if (pad_mask.defined() && pad_mask.shape() != Shape{B, T})
    throw std::invalid_argument("XLModel: pad_mask must be [B, T] like tokens, got " + shape_str(pad_mask.shape()));
  const int64_t keep = mem_len < 0 ? cfg_.mem_len : mem_len;
  const bool train = is_training();
  const DType dt = embed_tokens->weight.dtype();
  Variable x = dropout((*embed_tokens)(tokens) * std::sqrt((double)D), cfg_.base.dropout, train);
  const Tensor& table = positions_.get(std::to_string(M + T) + "x" + std::to_string(D) + dtype_name(dt), tokens.device(),
                                       [&] { return xl_relative_positions(M + T, D, dt); });
  Variable pos = dropout(Variable(table), cfg_.base.dropout, train);
  XLOutput out;
  for (int64_t l = 0; l < L; ++l) {
    Variable mem = memory.empty() ? Variable() : Variable(memory[(size_t)l]);
    if (keep > 0) {  // the new memory: the last `keep` states that entered this layer, without gradient
      Variable all = M > 0 ? cat({mem, x}, 1) : x;
      const int64_t n = all.size(1);
      out.memory.push_back(detach(slice(all, 1, std::max<int64_t>(0, n - keep), n)).data().contiguous());
    }
    x = layer_list[(size_t)l]->forward(x, mem, pos, r_w_bias, r_r_bias, pad_mask);
  }
  if (layer_norm) x = norm_forward(*layer_norm, x, pad_mask);
  x = dropout(x, cfg_.base.dropout, train);
  out.logits = linear(x, embed_tokens->weight, out_bias, /*autocast_output=*/true);  // bfloat16 logits under autocast
  return out;
}

}  // namespace nl
