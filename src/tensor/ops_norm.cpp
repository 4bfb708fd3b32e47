// Front end of the fused LayerNorm family (Xu et al. 2019, Eq. 1; backward: appendix B, W1/W2/W3) over rows
// and over the channel groups of images, and of BatchNorm over the channels of images; see tensor/ops_nn.h.
// The LayerNorm kernels take the same LayerNormOptions (their NormKernelOpts).
#include <stdexcept>
#include <string>

#include "tensor/fused_dispatch.h"
#include "tensor/ops.h"
#include "tensor/ops_nn.h"

namespace nl {

namespace {
// Throws unless weight and bias are undefined or [H] like x.
void check_affine(const char* op, const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t H) {
  check_like(op, x, {&weight, &bias}, "weight and bias");
  for (const Tensor* p : {&weight, &bias})
    if (p->defined() && p->shape() != Shape{H})
      throw std::invalid_argument(std::string(op) + ": weight and bias must be [" + std::to_string(H) + "], got " +
                                  shape_str(p->shape()));
}

// Rows of the last dim: throws unless x can be normalised over it and weight/bias are [H] like x.
int64_t check_norm_args(const char* op, const Tensor& x, const Tensor& weight, const Tensor& bias,
                        const LayerNormOptions& o) {
  check_floating(x, op);
  if (x.dim() < 1 || x.size(-1) < (o.unbiased ? 2 : 1))
    throw std::invalid_argument(std::string(op) + ": last dim of " + shape_str(x.shape()) + " is too small to normalise");
  const int64_t H = x.size(-1);
  check_affine(op, x, weight, bias, H);
  return H;
}

// Images [N, C, H, W] in channel groups: throws unless G divides C into groups that can be normalised and
// weight/bias are [C]; returns x's [N, C, H·W] shape.
Shape check_channel_args(const char* op, const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t groups,
                         const LayerNormOptions& o) {
  check_floating(x, op);
  if (x.dim() != 4)
    throw std::invalid_argument(std::string(op) + ": input must be images [N, C, H, W], got " + shape_str(x.shape()));
  const int64_t C = x.size(1);
  if (groups < 1 || C % groups != 0 || C / groups < (o.unbiased ? 2 : 1))
    throw std::invalid_argument(std::string(op) + ": groups = " + std::to_string(groups) + " must divide the " +
                                std::to_string(C) + " channels of " + shape_str(x.shape()) + " into groups of " +
                                (o.unbiased ? "at least 2 (unbiased)" : "at least 1"));
  check_affine(op, x, weight, bias, C);
  return {x.size(0), C, x.size(2) * x.size(3)};
}

// Images [N, C, H, W] normalised per channel: throws unless a batch statistic exists (N·H·W >= 2) and
// weight/bias are [C]; returns x's [N, C, H·W] shape.
Shape check_batch_channel_args(const char* op, const Tensor& x, const Tensor& weight, const Tensor& bias) {
  check_floating(x, op);
  if (x.dim() != 4)
    throw std::invalid_argument(std::string(op) + ": input must be images [N, C, H, W], got " + shape_str(x.shape()));
  if (x.size(0) * x.size(2) * x.size(3) < 2)
    throw std::invalid_argument(std::string(op) + ": " + shape_str(x.shape()) + " has fewer than 2 values per " +
                                "channel to estimate a variance; use a larger batch or eval()");
  check_affine(op, x, weight, bias, x.size(1));
  return {x.size(0), x.size(1), x.size(2) * x.size(3)};
}

// The tensor into which a backward adds dx in the kernel's pass, when `acc` can be one (contiguous, x's
// shape, dtype and device).
bool accumulates_into(const Tensor& acc, const Tensor& x) {
  return acc.defined() && acc.shape() == x.shape() && acc.dtype() == x.dtype() && acc.device() == x.device() &&
         acc.is_contiguous();
}

// The gradients of a backward over images [N, C, H, W]: dx (`into` when defined, else new) and, when
// asked for, dweight and dbias [C].
LayerNormGrads channel_grads(const Tensor& x, bool want_weight, bool want_bias, const Tensor& into) {
  auto per_channel = [&] { return Tensor::empty({x.size(1)}, x.dtype(), x.device()); };
  return {into.defined() ? into : Tensor::empty(x.shape(), x.dtype(), x.device()),
          want_weight ? per_channel() : Tensor(), want_bias ? per_channel() : Tensor()};
}
}  // namespace

LayerNormResult layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, const LayerNormOptions& o) {
  observe(AutocastOp::Norm, x);
  const int64_t H = check_norm_args("layer_norm", x, weight, bias, o);
  Tensor xc = x.contiguous();
  const int64_t R = xc.numel() / H;
  Tensor w = weight.defined() ? weight.contiguous() : Tensor(), b = bias.defined() ? bias.contiguous() : Tensor();
  Tensor x2 = xc.view({R, H});
  LayerNormResult r{Tensor::empty({R, H}, xc.dtype(), xc.device()), Tensor::empty({R}, xc.dtype(), xc.device()),
                    Tensor::empty({R}, xc.dtype(), xc.device())};
  fused_for(xc).layer_norm(r.y.desc(), r.mean.desc(), r.rstd.desc(), x2.desc(), opt_desc(w), opt_desc(b), o);
  r.y = r.y.view(xc.shape());
  return r;
}

LayerNormGrads layer_norm_backward(const Tensor& gy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                   const Tensor& weight, const LayerNormOptions& o, bool want_weight,
                                   bool want_bias, const Tensor& accumulate_into) {
  observe(AutocastOp::Norm, x);
  const char* op = "layer_norm_backward";
  const int64_t H = check_norm_args(op, x, weight, Tensor(), o);
  const int64_t R = x.numel() / H;
  check_same(gy, x, op);
  check_like(op, x, {&mean, &rstd}, "mean and 1/D");
  if (gy.shape() != x.shape() || mean.numel() != R || rstd.numel() != R)
    throw std::invalid_argument(std::string(op) + ": gradient " + shape_str(gy.shape()) + ", mean " +
                                shape_str(mean.shape()) + " and 1/D " + shape_str(rstd.shape()) +
                                " do not match the input " + shape_str(x.shape()));
  Tensor x2 = x.contiguous().view({R, H}), gc = gy.contiguous().view({R, H});
  Tensor w = weight.defined() ? weight.contiguous() : Tensor();
  const Tensor& acc = accumulate_into;
  const bool accumulate = accumulates_into(acc, x);
  LayerNormGrads g{accumulate ? acc.view({R, H}) : Tensor::empty({R, H}, x.dtype(), x.device()), Tensor(), Tensor()};
  if (want_weight && w.defined()) g.weight = Tensor::empty({H}, x.dtype(), x.device());
  if (want_bias) g.bias = Tensor::empty({H}, x.dtype(), x.device());
  fused_for(x2).layer_norm_backward(g.x.desc(), opt_desc(g.weight), opt_desc(g.bias), gc.desc(), x2.desc(),
                                    mean.contiguous().desc(), rstd.contiguous().desc(), opt_desc(w), o, accumulate);
  if (accumulate) acc.bump_version();
  g.x = accumulate ? acc : g.x.view(x.shape());
  return g;
}

LayerNormResult layer_norm_channels(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t groups,
                                    const LayerNormOptions& o) {
  observe(AutocastOp::Norm, x);
  const Shape s = check_channel_args("layer_norm_channels", x, weight, bias, groups, o);
  Tensor xc = x.contiguous();
  Tensor w = weight.defined() ? weight.contiguous() : Tensor(), b = bias.defined() ? bias.contiguous() : Tensor();
  const Shape stats{x.size(0), groups, x.size(2), x.size(3)};
  LayerNormResult r{Tensor::empty(x.shape(), xc.dtype(), xc.device()), Tensor::empty(stats, xc.dtype(), xc.device()),
                    Tensor::empty(stats, xc.dtype(), xc.device())};
  const Shape s3{s[0], groups, s[2]};
  fused_for(xc).layer_norm_channels(r.y.view(s).desc(), r.mean.view(s3).desc(), r.rstd.view(s3).desc(),
                                    xc.view(s).desc(), opt_desc(w), opt_desc(b), groups, o);
  return r;
}

LayerNormGrads layer_norm_channels_backward(const Tensor& gy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                            const Tensor& weight, int64_t groups, const LayerNormOptions& o,
                                            bool want_weight, bool want_bias, const Tensor& accumulate_into) {
  observe(AutocastOp::Norm, x);
  const char* op = "layer_norm_channels_backward";
  const Shape s = check_channel_args(op, x, weight, Tensor(), groups, o);
  check_same(gy, x, op);
  check_like(op, x, {&mean, &rstd}, "mean and 1/D");
  const Shape s3{s[0], groups, s[2]};
  if (gy.shape() != x.shape() || mean.numel() != s[0] * groups * s[2] || rstd.numel() != mean.numel())
    throw std::invalid_argument(std::string(op) + ": gradient " + shape_str(gy.shape()) + ", mean " +
                                shape_str(mean.shape()) + " and 1/D " + shape_str(rstd.shape()) +
                                " do not match the input " + shape_str(x.shape()) + " in " + std::to_string(groups) +
                                " groups");
  Tensor xc = x.contiguous().view(s), gc = gy.contiguous().view(s);
  Tensor w = weight.defined() ? weight.contiguous() : Tensor();
  const bool accumulate = accumulates_into(accumulate_into, x);
  LayerNormGrads g = channel_grads(x, w.defined() && want_weight, want_bias, accumulate ? accumulate_into : Tensor());
  fused_for(xc).layer_norm_channels_backward(g.x.view(s).desc(), opt_desc(g.weight), opt_desc(g.bias), gc.desc(),
                                             xc.desc(), mean.contiguous().view(s3).desc(),
                                             rstd.contiguous().view(s3).desc(), opt_desc(w), groups, o, accumulate);
  if (accumulate) g.x.bump_version();
  return g;
}

BatchNormResult batch_norm_channels(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  observe(AutocastOp::Norm, x);
  const Shape s = check_batch_channel_args("batch_norm_channels", x, weight, bias);
  Tensor xc = x.contiguous();
  Tensor w = weight.defined() ? weight.contiguous() : Tensor(), b = bias.defined() ? bias.contiguous() : Tensor();
  auto per_channel = [&] { return Tensor::empty({s[1]}, xc.dtype(), xc.device()); };
  BatchNormResult r{Tensor::empty(x.shape(), xc.dtype(), xc.device()), per_channel(), per_channel(), per_channel()};
  fused_for(xc).batch_norm_channels(r.y.view(s).desc(), r.mean.desc(), r.var.desc(), r.rstd.desc(), xc.view(s).desc(),
                                    opt_desc(w), opt_desc(b), eps);
  return r;
}

LayerNormGrads batch_norm_channels_backward(const Tensor& gy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                            const Tensor& weight, bool want_weight, bool want_bias,
                                            const Tensor& accumulate_into) {
  observe(AutocastOp::Norm, x);
  const char* op = "batch_norm_channels_backward";
  const Shape s = check_batch_channel_args(op, x, weight, Tensor());
  check_same(gy, x, op);
  check_like(op, x, {&mean, &rstd}, "mean and rstd");
  if (gy.shape() != x.shape() || mean.numel() != s[1] || rstd.numel() != s[1])
    throw std::invalid_argument(std::string(op) + ": gradient " + shape_str(gy.shape()) + ", mean " +
                                shape_str(mean.shape()) + " and rstd " + shape_str(rstd.shape()) +
                                " do not match the input " + shape_str(x.shape()));
  Tensor xc = x.contiguous().view(s), gc = gy.contiguous().view(s);
  Tensor w = weight.defined() ? weight.contiguous() : Tensor();
  const bool accumulate = accumulates_into(accumulate_into, x);
  LayerNormGrads g = channel_grads(x, w.defined() && want_weight, want_bias, accumulate ? accumulate_into : Tensor());
  fused_for(xc).batch_norm_channels_backward(g.x.view(s).desc(), opt_desc(g.weight), opt_desc(g.bias), gc.desc(),
                                             xc.desc(), mean.contiguous().desc(), rstd.contiguous().desc(), opt_desc(w),
                                             accumulate);
  if (accumulate) g.x.bump_version();
  return g;
}

}  // namespace nl
