// Scaled dot-product attention (Vaswani et al. 2017, Eq. 1): argument checks, the mask built from
// AttentionOptions, and the composite twin from primitive ops. The fused kernel replaces `attention`.
#include <cmath>
#include <stdexcept>

#include "autograd/functions.h"

namespace nl {

namespace {
void check_attention_args(const Variable& q, const Variable& k, const Variable& v, const AttentionOptions& o) {
  auto shp = [](const Variable& x) { return shape_str(x.shape()); };
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4)
    throw std::invalid_argument("attention: q, k, v must be [B, H, T, d] (got " + shp(q) + ", " + shp(k) + ", " +
                                shp(v) + ")");
  if (k.size(0) != q.size(0) || v.size(0) != q.size(0) || k.size(1) != q.size(1) || v.size(1) != q.size(1) ||
      k.size(3) != q.size(3) || v.size(2) != k.size(2))
    throw std::invalid_argument("attention: shapes do not match: q " + shp(q) + ", k " + shp(k) + ", v " + shp(v) +
                                " (need q [B,H,Tq,d], k [B,H,Tk,d], v [B,H,Tk,dv])");
  const int64_t B = q.size(0), Tq = q.size(2), Tk = k.size(2);
  if (o.key_padding_mask.defined() &&
      (o.key_padding_mask.dim() != 2 || o.key_padding_mask.size(0) != B || o.key_padding_mask.size(1) != Tk))
    throw std::invalid_argument("attention: key_padding_mask must be [B, Tk] = [" + std::to_string(B) + ", " +
                                std::to_string(Tk) + "] (got " + shape_str(o.key_padding_mask.shape()) + ")");
  if (o.attn_mask.defined() && (o.attn_mask.dim() != 2 || o.attn_mask.size(0) != Tq || o.attn_mask.size(1) != Tk))
    throw std::invalid_argument("attention: attn_mask must be [Tq, Tk] = [" + std::to_string(Tq) + ", " +
                                std::to_string(Tk) + "] (got " + shape_str(o.attn_mask.shape()) + ")");
  if (!(o.dropout >= 0.0 && o.dropout < 1.0))
    throw std::invalid_argument("attention: dropout must be in [0, 1) (got " + std::to_string(o.dropout) + ")");
}
}  // namespace

Variable attention_composite(const Variable& q, const Variable& k, const Variable& v, const AttentionOptions& o) {
  check_attention_args(q, k, v, o);
  const int64_t B = q.size(0), Tq = q.size(2), Tk = k.size(2);
  const double scale = o.scale != 0.0 ? o.scale : 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  Variable scores = matmul(q, transpose(k, 2, 3)) * scale;  // [B, H, Tq, Tk]
  if (o.attn_mask.defined()) scores = scores + Variable(o.attn_mask.to(q.dtype()));
  // keep[b, 0, i, j] = 1 where query i may attend key j; blocked scores get a large negative finite value
  // (not -inf) so that a fully blocked row stays finite and is zeroed below.
  Tensor keep = Tensor::ones({B, 1, Tq, Tk}, q.dtype());
  if (o.key_padding_mask.defined()) {
    Tensor pad = ne(o.key_padding_mask.to(q.dtype()), Tensor::scalar(0.0, q.dtype())).reshape({B, 1, 1, Tk});
    keep = mul(keep, affine(pad, -1.0, 1.0));
  }
  if (o.causal) {
    std::vector<double> c(static_cast<size_t>(Tq * Tk));
    for (int64_t i = 0; i < Tq; ++i)
      for (int64_t j = 0; j < Tk; ++j) c[static_cast<size_t>(i * Tk + j)] = j <= i + (Tk - Tq) ? 1.0 : 0.0;
    keep = mul(keep, Tensor::from_vector(c, {1, 1, Tq, Tk}).to(q.dtype()));
  }
  Tensor blocked = eq(keep, Tensor::scalar(0.0, q.dtype()));
  if (o.attn_mask.defined())  // -inf entries of an additive mask block too
    blocked = add(blocked, eq(o.attn_mask.to(q.dtype()), Tensor::scalar(-INFINITY, q.dtype())).reshape({1, 1, Tq, Tk}));
  blocked = gt(blocked, 0.0);
  scores = masked_fill(scores, blocked, -1e9);
  Variable w = softmax(scores, -1);
  w = masked_fill(w, blocked, 0.0);  // fully blocked rows: uniform -> zero
  w = dropout(w, o.dropout, o.training);
  return matmul(w, v);
}

// Until the fused CPU kernel lands, the fused entry point runs the composite.
Variable attention(const Variable& q, const Variable& k, const Variable& v, const AttentionOptions& o) {
  return attention_composite(q, k, v, o);
}

}  // namespace nl
