// Composite LayerNorm family (Xu et al. 2019, Eq. 1 and the closed-form backward of appendix B, as in
// cpu_norm.cpp; over NCHW channel groups as in cpu_norm_channels.cpp), BatchNorm over the channels of images
// (Ioffe & Szegedy 2015, as cpu_batch_norm_channels.cpp) and Adam/AdamW (Kingma & Ba 2015, Alg. 1;
// Loshchilov & Hutter 2019, as in cpu_optim.cpp), written with core kernels.
#include <cmath>

#include "backends/composite/composite_kernels.h"
#include "backends/composite/scratch.h"

namespace nl {
using composite::cols_of;
using composite::reshaped;
using composite::Scratch;
using composite::view;

void CompositeKernels::layer_norm(const Desc& y, const Desc& mean, const Desc& rstd, const Desc& x,
                                  const Desc& weight, const Desc& bias, const NormKernelOpts& o) {
  const int64_t H = cols_of(x), R = H ? x.numel() / H : 0;
  if (R * H == 0) return;
  const double nv = o.unbiased ? (double)(H - 1) : (double)H;
  const DType t = x.dtype;
  const int dev = x.device_index;
  const Desc X = reshaped(x, {R, H}), Y = reshaped(y, {R, H}), M = reshaped(mean, {R}), RS = reshaped(rstd, {R});
  if (o.center)
    be_.reduce(ReduceOp::Mean, M, X, 1);
  else
    be_.fill(M, 0.0);
  be_.binary(BinaryOp::Sub, Y, X, view(M, {R, H}, {1, 0}));  // d = x - mu
  Scratch sq(be_, t, dev, {R, H}), var(be_, t, dev, {R});
  be_.unary(UnaryOp::Square, sq.d(), Y, 0, 0);
  be_.reduce(ReduceOp::Sum, var.d(), sq.d(), 1);
  be_.unary(UnaryOp::Affine, var.d(), var.d(), 1.0 / nv, 0.0);
  if (o.eps_inside) {  // D = sqrt(var + eps)
    be_.unary(UnaryOp::Affine, var.d(), var.d(), 1.0, o.eps);
    be_.unary(UnaryOp::Sqrt, var.d(), var.d(), 0, 0);
  } else {  // D = sqrt(var) + eps
    be_.unary(UnaryOp::Sqrt, var.d(), var.d(), 0, 0);
    be_.unary(UnaryOp::Affine, var.d(), var.d(), 1.0, o.eps);
  }
  be_.unary(UnaryOp::Reciprocal, RS, var.d(), 0, 0);
  be_.binary(BinaryOp::Mul, Y, Y, view(RS, {R, H}, {1, 0}));
  if (weight.data) be_.binary(BinaryOp::Mul, Y, Y, view(weight, {R, H}, {0, 1}));  // y = g ⊙ n + b
  if (bias.data) be_.binary(BinaryOp::Add, Y, Y, view(bias, {R, H}, {0, 1}));
}

void CompositeKernels::layer_norm_backward(const Desc& gx, const Desc& gweight, const Desc& gbias, const Desc& gy,
                                           const Desc& x, const Desc& mean, const Desc& rstd, const Desc& weight,
                                           const NormKernelOpts& o, bool accumulate) {
  const int64_t H = cols_of(x), R = H ? x.numel() / H : 0;
  if (R * H == 0) return;
  if (accumulate) {  // the gradient into scratch, then added to what gx holds
    Scratch g(be_, x.dtype, x.device_index, {R, H});
    layer_norm_backward(g.d(), gweight, gbias, gy, x, mean, rstd, weight, o, false);
    be_.binary(BinaryOp::Add, reshaped(gx, {R, H}), reshaped(gx, {R, H}), g.d());
    return;
  }
  const double nv = o.unbiased ? (double)(H - 1) : (double)H;
  const bool through_mean = o.center && !o.detach_mean;
  const DType t = x.dtype;
  const int dev = x.device_index;
  const Desc X = reshaped(x, {R, H}), GX = reshaped(gx, {R, H});
  const Desc MB = view(mean, {R, H}, {1, 0}), RSB = view(rstd, {R, H}, {1, 0});
  Scratch d(be_, t, dev, {R, H}), prod(be_, t, dev, {R, H}), S(be_, t, dev, {R}), gbar(be_, t, dev, {R}),
      coef(be_, t, dev, {R}), gw(be_, t, dev, {weight.data ? R : 0, H});
  be_.binary(BinaryOp::Sub, d.d(), X, MB);
  // Parameter gradients from dL/dy (sums over rows: a reduce of the transposed [H, R] views).
  if (gbias.data) be_.reduce(ReduceOp::Sum, reshaped(gbias, {H}), view(gy, {H, R}, {1, H}), 1);
  if (gweight.data) {
    be_.binary(BinaryOp::Mul, prod.d(), d.d(), RSB);  // n = (x - mu)/D
    be_.binary(BinaryOp::Mul, prod.d(), prod.d(), reshaped(gy, {R, H}));
    be_.reduce(ReduceOp::Sum, reshaped(gweight, {H}), prod.as({H, R}, {1, H}), 1);
  }
  // The formula of Eq. 1's backward runs on g ⊙ dL/dy.
  if (weight.data) be_.binary(BinaryOp::Mul, gw.d(), reshaped(gy, {R, H}), view(weight, {R, H}, {0, 1}));
  const Desc GY = weight.data ? gw.d() : reshaped(gy, {R, H});
  be_.binary(BinaryOp::Mul, prod.d(), GY, d.d());
  be_.reduce(ReduceOp::Sum, S.d(), prod.d(), 1);  // S = sum_i g_i d_i
  if (through_mean) be_.reduce(ReduceOp::Mean, gbar.d(), GY, 1);
  if (!o.detach_std) {  // coef = S / (n_v * s' * D^2), 0 where s' <= 0
    Scratch D(be_, t, dev, {R}), sp(be_, t, dev, {R}), ok(be_, t, dev, {R}), zero(be_, t, dev, {1});
    be_.unary(UnaryOp::Reciprocal, D.d(), reshaped(rstd, {R}), 0, 0);
    be_.unary(UnaryOp::Affine, sp.d(), D.d(), 1.0, o.eps_inside ? 0.0 : -o.eps);
    be_.binary(BinaryOp::Mul, coef.d(), sp.d(), D.d());
    be_.binary(BinaryOp::Mul, coef.d(), coef.d(), D.d());
    be_.unary(UnaryOp::Affine, coef.d(), coef.d(), nv, 0.0);
    be_.binary(BinaryOp::Div, coef.d(), S.d(), coef.d());
    be_.unary(UnaryOp::GtScalar, ok.d(), sp.d(), 0.0, 0.0);
    be_.fill(zero.d(), 0.0);
    be_.where(coef.d(), ok.d(), coef.d(), zero.as({R}, {0}));
  }
  if (through_mean)
    be_.binary(BinaryOp::Sub, GX, GY, gbar.as({R, H}, {1, 0}));
  else if (GX.data != GY.data)
    be_.copy(GX, GY);
  be_.binary(BinaryOp::Mul, GX, GX, RSB);
  if (!o.detach_std) {
    be_.binary(BinaryOp::Mul, prod.d(), d.d(), coef.as({R, H}, {1, 0}));
    be_.binary(BinaryOp::Sub, GX, GX, prod.d());
  }
}

// LN-G over NCHW channel groups: the rows kernels above (or a backend's own) on the permuted rows
// [N·P·G, n], with the per-channel affine and its gradients on the NCHW layout.
namespace {
// x [N, C, P] seen as [N, P, C] (a pixel's channels one after the other; no copy).
Desc by_pixel(const Desc& x, int64_t N, int64_t C, int64_t P) { return view(x, {N, P, C}, {C * P, 1, P}); }
}  // namespace

void CompositeKernels::layer_norm_channels(const Desc& y, const Desc& mean, const Desc& rstd, const Desc& x,
                                           const Desc& weight, const Desc& bias, int64_t groups,
                                           const NormKernelOpts& o) {
  const int64_t N = x.shape[0], C = x.shape[1], P = x.shape[2], G = groups, R = N * P * G, n = C / G;
  if (N * C * P == 0) return;
  const DType t = x.dtype;
  const int dev = x.device_index;
  Scratch xr(be_, t, dev, {R, n}), yr(be_, t, dev, {R, n}), mr(be_, t, dev, {R}), rr(be_, t, dev, {R});
  be_.copy(xr.as({N, P, C}, {P * C, C, 1}), by_pixel(x, N, C, P));
  layer_norm(yr.d(), mr.d(), rr.d(), xr.d(), Desc{}, Desc{}, o);
  be_.copy(by_pixel(y, N, C, P), yr.as({N, P, C}, {P * C, C, 1}));
  be_.copy(by_pixel(mean, N, G, P), mr.as({N, P, G}, {P * G, G, 1}));
  be_.copy(by_pixel(rstd, N, G, P), rr.as({N, P, G}, {P * G, G, 1}));
  const Desc Y = reshaped(y, {N, C, P});
  if (weight.data) be_.binary(BinaryOp::Mul, Y, Y, view(weight, {N, C, P}, {0, 1, 0}));
  if (bias.data) be_.binary(BinaryOp::Add, Y, Y, view(bias, {N, C, P}, {0, 1, 0}));
}

void CompositeKernels::layer_norm_channels_backward(const Desc& gx, const Desc& gweight, const Desc& gbias,
                                                    const Desc& gy, const Desc& x, const Desc& mean,
                                                    const Desc& rstd, const Desc& weight, int64_t groups,
                                                    const NormKernelOpts& o, bool accumulate) {
  const int64_t N = x.shape[0], C = x.shape[1], P = x.shape[2], G = groups, R = N * P * G, n = C / G;
  if (N * C * P == 0) return;
  const DType t = x.dtype;
  const int dev = x.device_index;
  if (accumulate) {  // the gradient into scratch, then added to what gx holds
    Scratch g(be_, t, dev, {N, C, P});
    layer_norm_channels_backward(g.d(), gweight, gbias, gy, x, mean, rstd, weight, groups, o, false);
    be_.binary(BinaryOp::Add, reshaped(gx, {N, C, P}), reshaped(gx, {N, C, P}), g.d());
    return;
  }
  // Parameter gradients: sums over images and pixels per channel ([C, N, P] views reduced over N, P).
  if (gbias.data) be_.reduce(ReduceOp::Sum, reshaped(gbias, {C}), view(gy, {C, N, P}, {P, C * P, 1}), 2);
  if (gweight.data) {  // Σ gy ⊙ (x - mu)/D, mu and 1/D of [N, G, P] broadcast over a group's n channels
    Scratch prod(be_, t, dev, {N, G, n, P});
    const Desc MB = view(mean, {N, G, n, P}, {G * P, P, 0, 1}), RB = view(rstd, {N, G, n, P}, {G * P, P, 0, 1});
    be_.binary(BinaryOp::Sub, prod.d(), reshaped(x, {N, G, n, P}), MB);
    be_.binary(BinaryOp::Mul, prod.d(), prod.d(), RB);
    be_.binary(BinaryOp::Mul, prod.d(), prod.d(), reshaped(gy, {N, G, n, P}));
    be_.reduce(ReduceOp::Sum, reshaped(gweight, {C}), prod.as({C, N, P}, {P, C * P, 1}), 2);
  }
  // dx: the rows backward on w ⊙ gy, permuted to rows and back.
  Scratch xr(be_, t, dev, {R, n}), gr(be_, t, dev, {R, n}), gxr(be_, t, dev, {R, n}), mr(be_, t, dev, {R}),
      rr(be_, t, dev, {R});
  const Desc GR = gr.as({N, P, C}, {P * C, C, 1});
  if (weight.data)
    be_.binary(BinaryOp::Mul, GR, by_pixel(gy, N, C, P), view(weight, {N, P, C}, {0, 0, 1}));
  else
    be_.copy(GR, by_pixel(gy, N, C, P));
  be_.copy(xr.as({N, P, C}, {P * C, C, 1}), by_pixel(x, N, C, P));
  be_.copy(mr.as({N, P, G}, {P * G, G, 1}), by_pixel(mean, N, G, P));
  be_.copy(rr.as({N, P, G}, {P * G, G, 1}), by_pixel(rstd, N, G, P));
  layer_norm_backward(gxr.d(), Desc{}, Desc{}, gr.d(), xr.d(), mr.d(), rr.d(), Desc{}, o, false);
  be_.copy(by_pixel(gx, N, C, P), gxr.as({N, P, C}, {P * C, C, 1}));
}

// BatchNorm over the channels of [N, C, P] images (as cpu_batch_norm_channels.cpp): per-channel sums are
// reductions of the [C, N, P] view over its last two dims.
void CompositeKernels::batch_norm_channels(const Desc& y, const Desc& mean, const Desc& var, const Desc& rstd,
                                           const Desc& x, const Desc& weight, const Desc& bias, double eps) {
  const int64_t N = x.shape[0], C = x.shape[1], P = x.shape[2];
  if (N * C * P == 0) return;
  const Desc X = reshaped(x, {N, C, P}), Y = reshaped(y, {N, C, P}), M = reshaped(mean, {C}), V = reshaped(var, {C}),
             RS = reshaped(rstd, {C});
  auto per_channel = [&](const Desc& d) { return view(d, {N, C, P}, {0, 1, 0}); };
  auto by_channel = [&](const Desc& d) { return view(d, {C, N, P}, {P, C * P, 1}); };  // [N, C, P] seen as [C, N, P]
  be_.reduce(ReduceOp::Mean, M, by_channel(X), 2);
  be_.binary(BinaryOp::Sub, Y, X, per_channel(M));  // d = x - mu
  Scratch sq(be_, x.dtype, x.device_index, {N, C, P});
  be_.unary(UnaryOp::Square, sq.d(), Y, 0, 0);
  be_.reduce(ReduceOp::Mean, V, by_channel(sq.d()), 2);
  be_.unary(UnaryOp::Affine, RS, V, 1.0, eps);
  be_.unary(UnaryOp::Sqrt, RS, RS, 0, 0);
  be_.unary(UnaryOp::Reciprocal, RS, RS, 0, 0);
  be_.binary(BinaryOp::Mul, Y, Y, per_channel(RS));
  if (weight.data) be_.binary(BinaryOp::Mul, Y, Y, per_channel(weight));
  if (bias.data) be_.binary(BinaryOp::Add, Y, Y, per_channel(bias));
}

void CompositeKernels::batch_norm_channels_backward(const Desc& gx, const Desc& gweight, const Desc& gbias,
                                                    const Desc& gy, const Desc& x, const Desc& mean, const Desc& rstd,
                                                    const Desc& weight, bool accumulate) {
  const int64_t N = x.shape[0], C = x.shape[1], P = x.shape[2];
  if (N * C * P == 0) return;
  const DType t = x.dtype;
  const int dev = x.device_index;
  if (accumulate) {  // the gradient into scratch, then added to what gx holds
    Scratch g(be_, t, dev, {N, C, P});
    batch_norm_channels_backward(g.d(), gweight, gbias, gy, x, mean, rstd, weight, false);
    be_.binary(BinaryOp::Add, reshaped(gx, {N, C, P}), reshaped(gx, {N, C, P}), g.d());
    return;
  }
  auto per_channel = [&](const Desc& d) { return view(d, {N, C, P}, {0, 1, 0}); };
  auto by_channel = [&](const Desc& d) { return view(d, {C, N, P}, {P, C * P, 1}); };
  const Desc X = reshaped(x, {N, C, P}), GY = reshaped(gy, {N, C, P}), GX = reshaped(gx, {N, C, P});
  Scratch nh(be_, t, dev, {N, C, P}), prod(be_, t, dev, {N, C, P}), sg(be_, t, dev, {C}), sgn(be_, t, dev, {C}),
      a(be_, t, dev, {C});
  be_.binary(BinaryOp::Sub, nh.d(), X, per_channel(mean));  // n̂ = (x - mu)·rstd
  be_.binary(BinaryOp::Mul, nh.d(), nh.d(), per_channel(rstd));
  be_.reduce(ReduceOp::Mean, sg.d(), by_channel(GY), 2);  // mean(gy)
  be_.binary(BinaryOp::Mul, prod.d(), GY, nh.d());
  be_.reduce(ReduceOp::Mean, sgn.d(), by_channel(prod.d()), 2);  // mean(gy·n̂)
  if (gbias.data) be_.unary(UnaryOp::Affine, reshaped(gbias, {C}), sg.d(), (double)(N * P), 0.0);
  if (gweight.data) be_.unary(UnaryOp::Affine, reshaped(gweight, {C}), sgn.d(), (double)(N * P), 0.0);
  // gx = w·rstd·(gy - mean(gy) - n̂·mean(gy·n̂))
  be_.binary(BinaryOp::Mul, prod.d(), nh.d(), per_channel(sgn.d()));
  be_.binary(BinaryOp::Sub, GX, GY, per_channel(sg.d()));
  be_.binary(BinaryOp::Sub, GX, GX, prod.d());
  if (weight.data)
    be_.binary(BinaryOp::Mul, a.d(), reshaped(weight, {C}), reshaped(rstd, {C}));
  else
    be_.copy(a.d(), reshaped(rstd, {C}));
  be_.binary(BinaryOp::Mul, GX, GX, per_channel(a.d()));
}

void CompositeKernels::adam_step(const Desc& param, const Desc& grad, const Desc& m, const Desc& v,
                                 const AdamKernelOpts& o) {
  const int64_t n = param.numel();
  if (n == 0) return;
  const double bc1 = 1.0 - std::pow(o.beta1, (double)o.step), bc2 = 1.0 - std::pow(o.beta2, (double)o.step);
  const double l2 = o.decoupled ? 0.0 : o.weight_decay, decay = o.decoupled ? 1.0 - o.lr * o.weight_decay : 1.0;
  const DType t = param.dtype;
  const int dev = param.device_index;
  const Desc P = reshaped(param, {n}), G = reshaped(grad, {n}), M = reshaped(m, {n}), V = reshaped(v, {n});
  Scratch g(be_, t, dev, {n}), tmp(be_, t, dev, {n});
  be_.unary(UnaryOp::Affine, g.d(), P, l2, 0.0);  // Adam: g + l2 * p
  be_.binary(BinaryOp::Add, g.d(), g.d(), G);
  be_.unary(UnaryOp::Affine, M, M, o.beta1, 0.0);  // m = b1 m + (1 - b1) g
  be_.unary(UnaryOp::Affine, tmp.d(), g.d(), 1.0 - o.beta1, 0.0);
  be_.binary(BinaryOp::Add, M, M, tmp.d());
  be_.unary(UnaryOp::Square, tmp.d(), g.d(), 0, 0);  // v = b2 v + (1 - b2) g^2
  be_.unary(UnaryOp::Affine, tmp.d(), tmp.d(), 1.0 - o.beta2, 0.0);
  be_.unary(UnaryOp::Affine, V, V, o.beta2, 0.0);
  be_.binary(BinaryOp::Add, V, V, tmp.d());
  be_.unary(UnaryOp::Sqrt, tmp.d(), V, 0, 0);  // p = decay p - lr/bc1 * m / (sqrt(v)/sqrt(bc2) + eps)
  be_.unary(UnaryOp::Affine, tmp.d(), tmp.d(), 1.0 / std::sqrt(bc2), o.eps);
  be_.binary(BinaryOp::Div, tmp.d(), M, tmp.d());
  be_.unary(UnaryOp::Affine, tmp.d(), tmp.d(), o.lr / bc1, 0.0);
  be_.unary(UnaryOp::Affine, P, P, decay, 0.0);
  be_.binary(BinaryOp::Sub, P, P, tmp.d());
}

}  // namespace nl
