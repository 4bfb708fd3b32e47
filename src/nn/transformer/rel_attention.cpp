#include "nn/transformer/rel_attention.h"

#include <cmath>
#include <stdexcept>

#include "autograd/functions.h"
#include "nn/init.h"

namespace nl {

Variable rel_shift(const Variable& x) {
  if (x.dim() < 2 || x.size(-1) < x.size(-2))
    throw std::invalid_argument("rel_shift: need x [..., Tq, K] with K >= Tq, got " + shape_str(x.shape()));
  const int64_t nd = x.dim(), Tq = x.size(-2), K = x.size(-1);
  Shape zs = x.shape();
  zs[(size_t)(nd - 1)] = 1;
  Variable padded = cat({Variable(Tensor::zeros(zs, x.dtype(), x.device())), x}, nd - 1);  // [..., Tq, K + 1]
  Shape tall = x.shape();
  tall[(size_t)(nd - 2)] = K + 1;
  tall[(size_t)(nd - 1)] = Tq;
  Variable rows = slice(reshape(padded, tall), nd - 2, 1, K + 1);  // [..., K, Tq]
  return reshape(contiguous(rows), x.shape());
}

Tensor xl_relative_positions(int64_t K, int64_t d, DType dtype) {
  if (K < 1 || d < 2 || d % 2 != 0)
    throw std::invalid_argument("xl_relative_positions: need K >= 1 and an even d >= 2, got K = " + std::to_string(K) +
                                ", d = " + std::to_string(d) + " (use an even --d-model)");
  const int64_t half = d / 2;
  std::vector<double> t((size_t)(K * d));
  for (int64_t c = 0; c < K; ++c) {
    const double p = (double)(K - 1 - c);
    for (int64_t i = 0; i < half; ++i) {
      const double a = p * std::pow(10000.0, -2.0 * (double)i / (double)d);
      t[(size_t)(c * d + i)] = std::sin(a);
      t[(size_t)(c * d + half + i)] = std::cos(a);
    }
  }
  return Tensor::from_vector(t, {K, d}).to(dtype);
}

namespace {
std::shared_ptr<Linear> xl_linear(int64_t in, int64_t out) {
  auto l = std::make_shared<Linear>(in, out, false);
  NoGradGuard ng;
  Tensor w = l->weight.data();
  init::normal_(w, 0.0, 0.02);
  return l;
}
}  // namespace

RelMultiheadAttention::RelMultiheadAttention(int64_t d, int64_t h, int64_t dh, double p)
    : Module("RelMultiheadAttention"), d_model(d), n_heads(h), d_head(dh), dropatt(p) {
  if (d < 1 || h < 1 || dh < 1)
    throw std::invalid_argument("RelMultiheadAttention: d_model, n_heads and d_head must be >= 1, got " +
                                std::to_string(d) + ", " + std::to_string(h) + ", " + std::to_string(dh));
  if (!(p >= 0.0 && p < 1.0))
    throw std::invalid_argument("RelMultiheadAttention: attention_dropout must be in [0, 1), got " + std::to_string(p));
  q_net = register_module("q_net", xl_linear(d, h * dh));
  kv_net = register_module("kv_net", xl_linear(d, 2 * h * dh));
  r_net = register_module("r_net", xl_linear(d, h * dh));
  o_net = register_module("o_net", xl_linear(h * dh, d));
}

Variable RelMultiheadAttention::forward(const Variable& h, const Variable& mem, const Variable& pos, const Variable& u,
                                        const Variable& v) {
  auto shp = [](const Variable& x) { return x.defined() ? shape_str(x.shape()) : std::string("undefined"); };
  const bool ok_h = h.dim() == 3 && h.size(2) == d_model;
  const int64_t B = ok_h ? h.size(0) : 0, T = ok_h ? h.size(1) : 0;
  const int64_t M = mem.defined() ? mem.size(1) : 0, K = M + T;
  const bool ok_m = !mem.defined() || (mem.dim() == 3 && mem.size(0) == B && mem.size(2) == d_model);
  const bool ok_p = pos.dim() == 2 && pos.size(0) == K && pos.size(1) == d_model;
  const Shape hd{n_heads, d_head};
  if (!ok_h || !ok_m || !ok_p || u.shape() != hd || v.shape() != hd)
    throw std::invalid_argument("RelMultiheadAttention: need h [B, T, " + std::to_string(d_model) + "], mem [B, M, " +
                                std::to_string(d_model) + "] or none, pos [M + T, " + std::to_string(d_model) +
                                "], u and v [" + std::to_string(n_heads) + ", " + std::to_string(d_head) + "]; got h " +
                                shp(h) + ", mem " + shp(mem) + ", pos " + shp(pos) + ", u " + shp(u) + ", v " + shp(v));
  auto heads = [&](const Variable& x, int64_t len) {  // [B, len, H dh] -> [B, H, len, dh]
    return transpose(reshape(x, {B, len, n_heads, d_head}), 1, 2);
  };
  Variable all = mem.defined() ? cat({mem, h}, 1) : h;  // [B, K, D]
  Variable q = heads((*q_net)(h), T);
  Variable kv = (*kv_net)(all);
  Variable k = heads(slice(kv, 2, 0, n_heads * d_head), K);
  Variable val = heads(slice(kv, 2, n_heads * d_head, 2 * n_heads * d_head), K);
  // r: [K, H dh] -> [H, dh, K] (broadcast over the batch in matmul).
  Variable r = permute(reshape((*r_net)(pos), {K, n_heads, d_head}), {1, 2, 0});
  Variable ac = matmul(q + reshape(u, {1, n_heads, 1, d_head}), transpose(k, 2, 3));  // [B, H, T, K]
  Variable bd = rel_shift(matmul(q + reshape(v, {1, n_heads, 1, d_head}), r));      // [B, H, T, K]
  Variable scores = (ac + bd) * (1.0 / std::sqrt((double)d_head));
  const Tensor& blocked = causal_mask_.get(std::to_string(T) + "x" + std::to_string(K), scores.device(), [&] {
    std::vector<double> b((size_t)(T * K));
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < K; ++j) b[(size_t)(i * K + j)] = j > i + M ? 1.0 : 0.0;
    return Tensor::from_vector(b, {1, 1, T, K});
  });
  scores = masked_fill(scores, blocked, -1e9);
  Variable p = dropout(softmax(scores, -1), dropatt, is_training());
  Variable out = matmul(p, val);  // [B, H, T, dh]
  return (*o_net)(reshape(transpose(out, 1, 2), {B, T, n_heads * d_head}));
}

std::string RelMultiheadAttention::extra_repr() const {
  return "d_model=" + std::to_string(d_model) + ", n_heads=" + std::to_string(n_heads) +
         ", d_head=" + std::to_string(d_head) + ", dropatt=" + std::to_string(dropatt);
}

}  // namespace nl
