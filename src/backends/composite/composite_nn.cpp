// Composite softmax, dropout, cross-entropy and attention row kernels: each fused kernel of the CPU
// (cpu_nn.cpp, cpu_attention.cpp, cpu_elementwise.cpp dropout) rebuilt from core kernels on scratch
// buffers. Same formulas and the same counter-based dropout mask as the CPU, so the results agree up
// to rounding.
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/composite/composite_kernels.h"
#include "backends/composite/scratch.h"

namespace nl {
using composite::cols_of;
using composite::reshaped;
using composite::rows_of;
using composite::Scratch;
using composite::view;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

// keep[i] = T(u_i) > T(p) ? 1 : 0 for u_i = the uniform number of counter offset + i (as the CPU masks).
void keep_mask(Backend& be, const Desc& keep, double p, uint64_t seed, uint64_t offset) {
  Scratch u(be, DType::Float64, keep.device_index, {keep.numel()});
  be.random(u.d(), false, 0.0, 1.0, seed, offset);
  // u seen with keep's shape (contiguous): a 1-d u would broadcast along keep's last dim instead.
  Desc us = u.d();
  us.ndim = keep.ndim;
  int64_t stride = 1;
  for (int i = keep.ndim - 1; i >= 0; --i) {
    us.shape[i] = keep.shape[i];
    us.strides[i] = stride;
    stride *= keep.shape[i];
  }
  be.copy(keep, us);
  be.unary(UnaryOp::GtScalar, keep, keep, p, 0.0);
}

// The safe targets (ignored -> 0) into `safe` (int64 [N, 1]) and the row weights (1 = counted, 0 =
// ignored) into `w` (dtype of `w`, [N]), made on the device: no copy to the host. A target outside
// [0, C) that is not ignored is reported by the gather / scatter of the caller (std::out_of_range naming
// the index; on an asynchronous device at the next synchronisation); with C == 0 every target must be
// ignored, which is checked here on the host (a degenerate case no training step takes).
void prepare_targets(Backend& be, const Desc& target, int64_t ignore_index, int64_t C, const Desc& safe,
                     const Desc& w, const char* kernel) {
  const int64_t N = target.numel();
  if (N == 0) return;
  if (C == 0) {
    const std::vector<int64_t> tg = composite::download_i64(be, target);
    for (size_t i = 0; i < tg.size(); ++i)
      if (tg[i] != ignore_index)
        throw std::out_of_range(std::string(kernel) + ": target " + std::to_string(tg[i]) + " at row " +
                                std::to_string(i) + " is outside [0, 0)");
  }
  const int dev = target.device_index;
  Scratch ig(be, DType::Int64, dev, {1}), zero(be, DType::Int64, dev, {1}), valid(be, DType::Int64, dev, {N});
  be.fill(ig.d(), (double)ignore_index);
  be.fill(zero.d(), 0.0);
  const Desc t = reshaped(target, {N});
  be.binary(BinaryOp::Ne, valid.d(), t, ig.as({N}, {0}));
  be.where(reshaped(safe, {N}), valid.d(), t, zero.as({N}, {0}));
  be.copy(w, valid.d());
}

}  // namespace

void CompositeKernels::softmax(const Desc& out, const Desc& in, bool log) {
  const int64_t R = rows_of(in), C = cols_of(in);
  if (R * C == 0) return;
  const Desc x = reshaped(in, {R, C}), y = reshaped(out, {R, C});
  Scratch m(be_, in.dtype, in.device_index, {R}), s(be_, in.dtype, in.device_index, {R});
  be_.reduce(ReduceOp::Max, m.d(), x, 1);
  be_.binary(BinaryOp::Sub, y, x, m.as({R, C}, {1, 0}));  // x - max: exp cannot overflow
  if (!log) {
    be_.unary(UnaryOp::Exp, y, y, 0, 0);
    be_.reduce(ReduceOp::Sum, s.d(), y, 1);
    be_.binary(BinaryOp::Div, y, y, s.as({R, C}, {1, 0}));
  } else {
    Scratch e(be_, in.dtype, in.device_index, {R, C});
    be_.unary(UnaryOp::Exp, e.d(), y, 0, 0);
    be_.reduce(ReduceOp::Sum, s.d(), e.d(), 1);
    be_.unary(UnaryOp::Log, s.d(), s.d(), 0, 0);
    be_.binary(BinaryOp::Sub, y, y, s.as({R, C}, {1, 0}));
  }
}

void CompositeKernels::softmax_backward(const Desc& gin, const Desc& gout, const Desc& yd, bool log) {
  const int64_t R = rows_of(yd), C = cols_of(yd);
  if (R * C == 0) return;
  const Desc y = reshaped(yd, {R, C}), g = reshaped(gout, {R, C}), gi = reshaped(gin, {R, C});
  Scratch t(be_, yd.dtype, yd.device_index, {R, C}), s(be_, yd.dtype, yd.device_index, {R});
  if (log) {  // dx = g - softmax * sum(g)
    be_.reduce(ReduceOp::Sum, s.d(), g, 1);
    be_.unary(UnaryOp::Exp, t.d(), y, 0, 0);
    be_.binary(BinaryOp::Mul, t.d(), t.d(), s.as({R, C}, {1, 0}));
    be_.binary(BinaryOp::Sub, gi, g, t.d());
  } else {  // dx = y * (g - sum(g*y))
    be_.binary(BinaryOp::Mul, t.d(), g, y);
    be_.reduce(ReduceOp::Sum, s.d(), t.d(), 1);
    be_.binary(BinaryOp::Sub, gi, g, s.as({R, C}, {1, 0}));
    be_.binary(BinaryOp::Mul, gi, gi, y);
  }
}

void CompositeKernels::dropout(const Desc& out, const Desc& in, double p, uint64_t seed, uint64_t offset) {
  if (!out.contiguous() || !in.contiguous() || out.numel() != in.numel() || out.dtype != in.dtype)
    throw std::invalid_argument("dropout: input and output must be contiguous with the same size and dtype");
  const int64_t n = in.numel();
  if (n == 0) return;
  // Unlike the attention mask, dropout compares u > p in double (as the CPU kernel does).
  Scratch u(be_, DType::Float64, in.device_index, {n}), keep(be_, in.dtype, in.device_index, {n});
  be_.random(u.d(), false, 0.0, 1.0, seed, offset);
  be_.unary(UnaryOp::GtScalar, u.d(), u.d(), p, 0.0);
  be_.copy(keep.d(), u.d());
  const Desc o = reshaped(out, {n}), x = reshaped(in, {n});
  be_.binary(BinaryOp::Mul, o, x, keep.d());
  be_.unary(UnaryOp::Affine, o, o, 1.0 / (1.0 - p), 0.0);
}

void CompositeKernels::dropout_add(const Desc& out, const Desc& residual, const Desc& in, double p, uint64_t seed,
                                   uint64_t offset) {
  if (!residual.contiguous() || residual.numel() != in.numel() || residual.dtype != in.dtype)
    throw std::invalid_argument("dropout_add: residual, input and output must be contiguous with the same size and dtype");
  const int64_t n = in.numel();
  if (n == 0) return;
  // Dropout into a scratch buffer when out is the residual, which the add still has to read.
  std::optional<Scratch> tmp;
  if (out.data == residual.data) tmp.emplace(be_, in.dtype, in.device_index, std::initializer_list<int64_t>{n});
  const Desc dropped = tmp ? tmp->d() : reshaped(out, {n});
  dropout(dropped, reshaped(in, {n}), p, seed, offset);
  be_.binary(BinaryOp::Add, reshaped(out, {n}), reshaped(residual, {n}), dropped);
}

void CompositeKernels::bias_relu_dropout(const Desc& out, const Desc& x, const Desc& bias, double p, uint64_t seed,
                                         uint64_t offset) {
  check_bias_relu_args(x, out, bias, p, "bias_relu_dropout");
  const int64_t R = rows_of(x), N = cols_of(x);
  if (R * N == 0) return;
  // A bfloat16 out: the float32 result in scratch, rounded once by the copy.
  std::optional<Scratch> f32;
  if (out.dtype != x.dtype) f32.emplace(be_, x.dtype, x.device_index, std::initializer_list<int64_t>{R, N});
  const Desc o = f32 ? f32->d() : reshaped(out, {R, N}), xi = reshaped(x, {R, N});
  if (bias.data)
    be_.binary(BinaryOp::Add, o, xi, composite::view(bias, {R, N}, {0, 1}));
  else
    be_.copy(o, xi);
  be_.unary(UnaryOp::Relu, o, o, 0.0, 0.0);
  if (p > 0) dropout(o, o, p, seed, offset);
  if (f32) be_.copy(reshaped(out, {R, N}), o);
}

void CompositeKernels::bias_relu_dropout_backward(const Desc& gx, const Desc& gbias, const Desc& gout, const Desc& out,
                                                  double p) {
  check_bias_relu_args(gout, gx, gbias, p, "bias_relu_dropout_backward");
  check_bias_relu_args(gout, out, Desc{}, p, "bias_relu_dropout_backward");
  const int64_t R = rows_of(gx), N = cols_of(gx);
  if (N == 0) return;
  // bfloat16 out / gx: widened exactly into float32 scratch / computed there and rounded once.
  std::optional<Scratch> y32, g32;
  if (out.dtype != gout.dtype) {
    y32.emplace(be_, gout.dtype, gout.device_index, std::initializer_list<int64_t>{R, N});
    if (R > 0) be_.copy(y32->d(), reshaped(out, {R, N}));
  }
  if (gx.dtype != gout.dtype) g32.emplace(be_, gout.dtype, gout.device_index, std::initializer_list<int64_t>{R, N});
  const Desc g = g32 ? g32->d() : reshaped(gx, {R, N});
  if (R > 0) {
    be_.binary(BinaryOp::ReluGrad, g, reshaped(gout, {R, N}), y32 ? y32->d() : reshaped(out, {R, N}));
    if (p > 0) be_.unary(UnaryOp::Affine, g, g, 1.0 / (1.0 - p), 0.0);
  }
  if (gbias.data) be_.reduce(ReduceOp::Sum, reshaped(gbias, {N}), composite::view(g, {N, R}, {1, N}), 1);
  if (g32 && R > 0) be_.copy(reshaped(gx, {R, N}), g);
}

void CompositeKernels::cross_entropy(const Desc& loss, const Desc& stats, const Desc& logits, const Desc& target,
                                     int64_t ignore_index, double eps, const Desc& grad, double grad_scale) {
  const int64_t N = rows_of(logits), C = cols_of(logits);
  const DType t = stats.dtype;  // the compute dtype (float32 for bfloat16 logits)
  const int dev = logits.device_index;
  Scratch safe(be_, DType::Int64, dev, {N, 1}), w(be_, t, dev, {N});
  prepare_targets(be_, target, ignore_index, C, safe.d(), w.d(), "cross_entropy");
  const Desc L = reshaped(loss, {N}), M = view(stats, {N}, {2}), Inv = view(stats, {N}, {2}, 1);
  if (N == 0) return;
  if (C == 0) {  // every target was ignore_index (checked above)
    Scratch v(be_, t, dev, {N});
    be_.fill(L, 0.0);
    be_.fill(v.d(), -INFINITY);
    be_.copy(M, v.d());
    be_.fill(v.d(), INFINITY);
    be_.copy(Inv, v.d());
    return;
  }
  std::optional<Scratch> x32;  // bfloat16 logits widened exactly
  if (logits.dtype != t) {
    x32.emplace(be_, t, dev, std::initializer_list<int64_t>{N, C});
    be_.copy(x32->d(), reshaped(logits, {N, C}));
  }
  const Desc X = x32 ? x32->d() : reshaped(logits, {N, C});
  Scratch lp(be_, t, dev, {N, C}), e(be_, t, dev, {N, C}), picked(be_, t, dev, {N, 1}), mean(be_, t, dev, {N}),
      zero(be_, t, dev, {1}), m(be_, t, dev, {N}), sum(be_, t, dev, {N});
  // log p = (x - m) - log Σ exp(x - m) (the ops of softmax(log = true)), and from the same m and Σ the
  // saved statistics m, 1 / Σ.
  be_.reduce(ReduceOp::Max, m.d(), X, 1);
  be_.binary(BinaryOp::Sub, lp.d(), X, m.as({N, C}, {1, 0}));
  be_.unary(UnaryOp::Exp, e.d(), lp.d(), 0, 0);
  be_.reduce(ReduceOp::Sum, sum.d(), e.d(), 1);
  be_.copy(M, m.d());
  be_.unary(UnaryOp::Reciprocal, m.d(), sum.d(), 0, 0);
  be_.copy(Inv, m.d());
  be_.unary(UnaryOp::Log, sum.d(), sum.d(), 0, 0);
  be_.binary(BinaryOp::Sub, lp.d(), lp.d(), sum.as({N, C}, {1, 0}));
  be_.gather_rows(picked.d(), lp.d(), safe.d());     // log p[target]
  be_.reduce(ReduceOp::Mean, mean.d(), lp.d(), 1);   // mean over classes of log p
  be_.unary(UnaryOp::Affine, L, reshaped(picked.d(), {N}), -(1.0 - eps), 0.0);
  be_.unary(UnaryOp::Affine, mean.d(), mean.d(), -eps, 0.0);
  be_.binary(BinaryOp::Add, L, L, mean.d());
  be_.fill(zero.d(), 0.0);
  be_.where(L, w.d(), L, zero.as({N}, {0}));
  if (grad.data) {  // the backward's formula for gloss = grad_scale on every row
    Scratch gl(be_, t, dev, {N});
    be_.fill(gl.d(), grad_scale);
    cross_entropy_backward(grad, gl.d(), logits, stats, target, ignore_index, eps);
  }
}

void CompositeKernels::cross_entropy_backward(const Desc& glogits, const Desc& gloss, const Desc& logits,
                                              const Desc& stats, const Desc& target, int64_t ignore_index,
                                              double eps) {
  const int64_t N = rows_of(logits), C = cols_of(logits);
  const DType t = stats.dtype;
  const int dev = logits.device_index;
  Scratch safe(be_, DType::Int64, dev, {N, 1}), w(be_, t, dev, {N});
  prepare_targets(be_, target, ignore_index, C, safe.d(), w.d(), "cross_entropy backward");
  if (N * C == 0) return;
  // bfloat16 logits widened exactly; a bfloat16 gradient computed in float32 and rounded once.
  std::optional<Scratch> x32, g32;
  if (logits.dtype != t) {
    x32.emplace(be_, t, dev, std::initializer_list<int64_t>{N, C});
    be_.copy(x32->d(), reshaped(logits, {N, C}));
  }
  if (glogits.dtype != t) g32.emplace(be_, t, dev, std::initializer_list<int64_t>{N, C});
  const Desc X = x32 ? x32->d() : reshaped(logits, {N, C}), G = g32 ? g32->d() : reshaped(glogits, {N, C});
  Scratch onehot(be_, t, dev, {N, C}), val(be_, t, dev, {N, 1}), zero(be_, t, dev, {1});
  be_.binary(BinaryOp::Sub, G, X, view(stats, {N, C}, {2, 0}));  // p = exp(x - m) · (1/Σ)
  be_.unary(UnaryOp::Exp, G, G, 0, 0);
  be_.binary(BinaryOp::Mul, G, G, view(stats, {N, C}, {2, 0}, 1));
  be_.unary(UnaryOp::Affine, G, G, 1.0, -eps / (double)C);  // p - eps / C
  be_.fill(onehot.d(), 0.0);
  be_.fill(val.d(), 1.0 - eps);
  be_.scatter_add_rows(onehot.d(), safe.d(), val.d());
  be_.binary(BinaryOp::Sub, G, G, onehot.d());
  be_.binary(BinaryOp::Mul, G, G, view(gloss, {N, C}, {1, 0}));
  be_.fill(zero.d(), 0.0);
  be_.where(G, w.as({N, C}, {1, 0}), G, zero.as({N, C}, {0, 0}));
  if (g32) be_.copy(reshaped(glogits, {N, C}), G);
}

void CompositeKernels::attention_softmax(const Desc& probs, const Desc& dropped, const Desc& scores,
                                         const Desc& key_padding, const Desc& attn_mask, const AttentionKernelOpts& o) {
  check_attention_args(scores, o, "attention_softmax");
  const int64_t B = o.batch, H = o.heads, tq = o.tq, tk = o.tk, R = B * H * tq;
  if (R * tk == 0) return;
  const DType t = scores.dtype;
  const int dev = scores.device_index;
  const Desc S = reshaped(scores, {R, tk}), P = reshaped(probs, {R, tk});
  Scratch x(be_, t, dev, {B, H, tq, tk}), vis(be_, t, dev, {B, tq, tk}), tmp(be_, t, dev, {B, tq, tk});
  Scratch c0(be_, t, dev, {1}), cinf(be_, t, dev, {1});
  be_.fill(c0.d(), 0.0);
  be_.fill(cinf.d(), -kInf);
  const Desc X = reshaped(x.d(), {R, tk});
  be_.unary(UnaryOp::Affine, X, S, o.scale, 0.0);
  // vis[b, i, j] = 1 where key j is visible from query i of batch b.
  be_.fill(vis.d(), 1.0);
  if (key_padding.data)
    be_.binary(BinaryOp::Eq, vis.d(), view(key_padding, {B, tq, tk}, {tk, 0, 1}), c0.as({B, tq, tk}, {0, 0, 0}));
  if (attn_mask.data) {
    be_.binary(BinaryOp::Add, x.d(), x.d(), view(attn_mask, {B, H, tq, tk}, {0, 0, tk, 1}));
    be_.binary(BinaryOp::Ne, tmp.d(), view(attn_mask, {B, tq, tk}, {0, tk, 1}), cinf.as({B, tq, tk}, {0, 0, 0}));
    be_.binary(BinaryOp::Mul, vis.d(), vis.d(), tmp.d());
  }
  if (o.causal) {  // visible iff j <= i + (tk - tq)
    Scratch ci(be_, t, dev, {tq}), cj(be_, t, dev, {tk});  // i + (tk - tq) and j, made on the device
    composite::iota(be_, ci.d(), (double)(tk - tq), 1.0);
    composite::iota(be_, cj.d(), 0.0, 1.0);
    be_.binary(BinaryOp::Le, view(tmp.d(), {tq, tk}, {tk, 1}), cj.as({tq, tk}, {0, 1}), ci.as({tq, tk}, {1, 0}));
    be_.binary(BinaryOp::Mul, vis.d(), vis.d(), view(tmp.d(), {B, tq, tk}, {0, tk, 1}));
  }
  const Desc visB = vis.as({B, H, tq, tk}, {tq * tk, 0, tk, 1});
  be_.where(x.d(), visB, x.d(), cinf.as({B, H, tq, tk}, {0, 0, 0, 0}));
  // Softmax over the visible keys; a row with none visible gets max 0, sum 0 and weights 0.
  Scratch m(be_, t, dev, {R}), s(be_, t, dev, {R}), ok(be_, t, dev, {R});
  be_.reduce(ReduceOp::Max, m.d(), X, 1);
  be_.unary(UnaryOp::GtScalar, ok.d(), m.d(), -kInf, 0.0);
  be_.where(m.d(), ok.d(), m.d(), c0.as({R}, {0}));
  be_.binary(BinaryOp::Sub, X, X, m.as({R, tk}, {1, 0}));
  be_.unary(UnaryOp::Exp, X, X, 0, 0);
  be_.reduce(ReduceOp::Sum, s.d(), X, 1);
  be_.unary(UnaryOp::GtScalar, ok.d(), s.d(), 0.0, 0.0);
  be_.unary(UnaryOp::Reciprocal, s.d(), s.d(), 0, 0);
  be_.where(s.d(), ok.d(), s.d(), c0.as({R}, {0}));
  be_.binary(BinaryOp::Mul, P, X, s.as({R, tk}, {1, 0}));
  if (o.dropout > 0) {
    const Desc Dd = reshaped(dropped, {R, tk});
    keep_mask(be_, X, o.dropout, o.seed, o.offset);
    be_.binary(BinaryOp::Mul, Dd, P, X);
    be_.unary(UnaryOp::Affine, Dd, Dd, 1.0 / (1.0 - o.dropout), 0.0);
  }
}

void CompositeKernels::attention_softmax_backward(const Desc& gscores, const Desc& dropped, const Desc& gprobs,
                                                  const Desc& probs, const AttentionKernelOpts& o) {
  check_attention_args(probs, o, "attention_softmax_backward");
  const int64_t R = o.batch * o.heads * o.tq, tk = o.tk;
  if (R * tk == 0) return;
  const DType t = probs.dtype;
  const int dev = probs.device_index;
  const Desc P = reshaped(probs, {R, tk}), G = reshaped(gprobs, {R, tk}), GS = reshaped(gscores, {R, tk});
  Scratch dp(be_, t, dev, {R, tk}), tmp(be_, t, dev, {R, tk}), dot(be_, t, dev, {R});
  if (o.dropout > 0) {
    const double inv_keep = 1.0 / (1.0 - o.dropout);
    const Desc Dd = reshaped(dropped, {R, tk});
    keep_mask(be_, tmp.d(), o.dropout, o.seed, o.offset);
    be_.binary(BinaryOp::Mul, dp.d(), G, tmp.d());
    be_.unary(UnaryOp::Affine, dp.d(), dp.d(), inv_keep, 0.0);
    be_.binary(BinaryOp::Mul, Dd, P, tmp.d());
    be_.unary(UnaryOp::Affine, Dd, Dd, inv_keep, 0.0);
  } else {
    be_.copy(dp.d(), G);
  }
  be_.binary(BinaryOp::Mul, tmp.d(), P, dp.d());
  be_.reduce(ReduceOp::Sum, dot.d(), tmp.d(), 1);  // sum_k P_k dP_k
  be_.binary(BinaryOp::Sub, GS, dp.d(), dot.as({R, tk}, {1, 0}));
  be_.binary(BinaryOp::Mul, GS, GS, P);
  be_.unary(UnaryOp::Affine, GS, GS, o.scale, 0.0);
}

}  // namespace nl
