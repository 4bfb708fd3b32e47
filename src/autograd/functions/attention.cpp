// Scaled dot-product attention (Vaswani et al. 2017, Eq. 1): argument checks, the fused op (batched
// GEMMs over B*H heads around the backend's attention row kernels; saves q, k, v and the weights P, the
// dropout mask is regenerated; docs/attention.md) and its composite twin from primitive ops. The fused op's
// forward and backward are functions of their own (attention_core.h), shared with self_attention().
#include <array>
#include <cmath>
#include <stdexcept>
#include <tuple>

#include "autograd/functions.h"
#include "autograd/functions/attention_core.h"
#include "backends/profiler.h"
#include "tensor/ops_nn.h"

namespace nl {

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
  if (k.dtype() != q.dtype() || v.dtype() != q.dtype() || !is_floating(q.dtype()))
    throw std::invalid_argument("attention: q, k, v must share one float dtype (got " + dtype_name(q.dtype()) + ", " +
                                dtype_name(k.dtype()) + ", " + dtype_name(v.dtype()) + "); convert with .to()");
  if (k.device() != q.device() || v.device() != q.device())
    throw std::invalid_argument("attention: q, k, v must be on one device; move them with .to(device)");
  if (!(o.dropout >= 0.0 && o.dropout < 1.0))
    throw std::invalid_argument("attention: dropout must be in [0, 1) (got " + std::to_string(o.dropout) + ")");
}

namespace {
double attention_scale(const AttentionOptions& o, int64_t dh) {
  return o.scale != 0.0 ? o.scale : 1.0 / std::sqrt(static_cast<double>(dh));
}

// A [B, H, rows, cols] operand whose rows may be strided (e.g. the head split of a [B, T, H*d] projection,
// strides (T*H*d, d, H*d, 1)): returned as is when its last dim is dense and rows do not overlap, copied
// to contiguous otherwise, so the attention GEMMs read projections in place (no head transposes).
Tensor rows_dense(const Tensor& t) {
  const auto& s = t.strides();
  return (s[3] == 1 || t.size(3) <= 1) && s[2] >= t.size(3) ? t : t.contiguous();
}

// An uninitialised [B, H, T, d] tensor laid out as [B, T, H, d] in memory (a transposed view), so that
// merging the heads back into [B, T, H*d] is free.
Tensor empty_heads_last(int64_t B, int64_t H, int64_t T, int64_t d, DType dt, Device dev) {
  return Tensor::empty({B, T, H, d}, dt, dev).transpose(1, 2);
}
}  // namespace

Variable attention_composite(const Variable& q, const Variable& k, const Variable& v, const AttentionOptions& o) {
  check_attention_args(q, k, v, o);
  const int64_t B = q.size(0), Tq = q.size(2), Tk = k.size(2);
  const double scale = attention_scale(o, q.size(3));
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

namespace {
// Where the row kernels put the operand of P·V (and of dV in backward) for weights p [B, H, Tq, Tk] and
// operand dtype dt: under autocast a bfloat16 tensor the kernel writes rounded, where the backend's kernels
// do (attention_bf16_operands: no float32 copy, no cast pass); else the float32 dropped weights with
// dropout, or P itself, cast by the caller's .to(dt).
Tensor operand_buffer(const Tensor& p, DType dt, bool drop) {
  if (dt == DType::BFloat16 && attention_bf16_operands(p)) return Tensor::empty(p.shape(), dt, p.device());
  return drop ? Tensor::empty(p.shape(), p.dtype(), p.device()) : p;
}
}  // namespace

AttentionCore attention_core_forward(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& o,
                                     Tensor& out) {
  const DType dt = q.dtype();
  const DType ft = dt == DType::BFloat16 ? DType::Float32 : dt;
  const Device dev = q.device();
  const int64_t B = q.size(0), H = q.size(1), Tq = q.size(2), Tk = k.size(2), dh = q.size(3), dv = v.size(3);
  AttentionCore c;
  c.ko.causal = o.causal;
  c.ko.scale = attention_scale(o, dh);
  if (o.training && o.dropout > 0) {  // the mask is regenerated in backward from (seed, offset)
    c.ko.dropout = o.dropout;
    std::tie(c.ko.seed, c.ko.offset) = next_random_offset((uint64_t)(B * H * Tq * Tk));
  }
  c.q = rows_dense(q), c.k = rows_dense(k), c.v = rows_dense(v);
  Tensor pad = o.key_padding_mask.defined()
                   ? ne(o.key_padding_mask.to(dev).to(ft), Tensor::scalar(0.0, ft, dev)).contiguous()
                   : Tensor();
  Tensor am = o.attn_mask.defined() ? o.attn_mask.to(dev).to(ft).contiguous() : Tensor();

  const bool drop = c.ko.dropout > 0;
  c.p = Tensor::empty({B, H, Tq, Tk}, ft, dev);  // raw scores, then the weights P in place
  matmul_heads_out(c.p, c.q, false, c.k, true);
  Tensor pd = operand_buffer(c.p, dt, drop);  // the operand of P·V (freed after forward)
  attention_softmax_out(c.p, pd, c.p, pad, am, c.ko);
  if (!out.defined()) out = empty_heads_last(B, H, Tq, dv, o.autocast_output ? dt : ft, dev);
  matmul_heads_out(out, pd.to(dt), false, c.v, false);
  return c;
}

void attention_core_backward(const AttentionCore& c, const Tensor& gout, Tensor& dq, Tensor& dk, Tensor& dv) {
  const Tensor &qc = c.q, &kc = c.k, &vc = c.v, &p = c.p;
  const int64_t B = p.size(0), H = p.size(1), Tq = p.size(2), Tk = p.size(3);
  const bool drop = c.ko.dropout > 0;
  const DType dt = qc.dtype(), ft = p.dtype();  // the operands' dtype; the rows' and results' dtype
  const Device dev = gout.device();
  Tensor g = rows_dense(gout.to(dt));
  Tensor gs = Tensor::empty({B, H, Tq, Tk}, ft, dev);  // dO V^T -> dL/d(raw scores)
  matmul_heads_out(gs, g, false, vc, true);
  Tensor pd = operand_buffer(p, dt, drop);  // the operand of dV, regenerated
  attention_softmax_backward_out(gs, pd, gs, p, c.ko);
  const Tensor gsl = gs.to(dt);
  if (dq.defined()) matmul_heads_out(dq, gsl, false, kc, false);
  if (dk.defined()) matmul_heads_out(dk, gsl, true, qc, false);
  if (dv.defined()) matmul_heads_out(dv, pd.to(dt), true, g, false);
}

Variable attention(const Variable& q_in, const Variable& k_in, const Variable& v_in, const AttentionOptions& o) {
  check_attention_args(q_in, k_in, v_in, o);
  prof::OpScope op_scope(prof::Op::Attention);
  // Under autocast q, k, v become bfloat16 (Cast nodes): the per-head products take bfloat16 operands and
  // accumulate in float32; scores, masks, softmax and P stay float32, P is rounded to bfloat16 as P·V's
  // operand.
  const Variable q = autocast(q_in, AutocastOp::Attention), k = autocast(k_in, AutocastOp::Attention),
                 v = autocast(v_in, AutocastOp::Attention);
  Tensor out;
  const AttentionCore c = attention_core_forward(q.data(), k.data(), v.data(), o, out);
  std::string note = (o.causal ? "causal " : "") + std::string("dropout=") + note_number(c.ko.dropout);
  // The gradient of an input that arrived in bfloat16 (a projection's autocast_output) is written in
  // bfloat16 by its product, as that tensor's gradient (and what the projection's products read); an input
  // cast here gets its gradient in float32, widened no further by the Cast node.
  const DType dt = q.dtype();
  const std::array<bool, 3> grad16{q_in.dtype() == DType::BFloat16 && dt == DType::BFloat16,
                                   k_in.dtype() == DType::BFloat16 && dt == DType::BFloat16,
                                   v_in.dtype() == DType::BFloat16 && dt == DType::BFloat16};
  return make_result(
      out, "Attention", {q, k, v},
      [c, grad16](const Tensor& gout, const std::vector<bool>& need) {
        prof::OpScope op_scope(prof::Op::Attention);
        const int64_t B = c.p.size(0), H = c.p.size(1), Tq = c.p.size(2), Tk = c.p.size(3);
        const DType dt = c.q.dtype(), ft = c.p.dtype();
        const Device dev = gout.device();
        // Gradients are written heads-last, so the head split's backward (transpose + reshape) is free.
        std::vector<Tensor> r(3);
        const auto gt = [&](int i) { return grad16[i] ? dt : ft; };
        if (need[0]) r[0] = empty_heads_last(B, H, Tq, c.q.size(3), gt(0), dev);
        if (need[1]) r[1] = empty_heads_last(B, H, Tk, c.k.size(3), gt(1), dev);
        if (need[2]) r[2] = empty_heads_last(B, H, Tk, c.v.size(3), gt(2), dev);
        attention_core_backward(c, gout, r[0], r[1], r[2]);
        return r;
      },
      {saved(c.q, "q"), saved(c.k, "k"), saved(c.v, "v"), saved(c.p, "attention weights P (before dropout)")}, note);
}

}  // namespace nl
