// Front end of the fused LayerNorm family (Xu et al. 2019, Eq. 1; backward: appendix B, W1/W2/W3), see
// tensor/ops_nn.h. The kernel takes the same LayerNormOptions (its NormKernelOpts).
#include <stdexcept>
#include <string>

#include "tensor/fused_dispatch.h"
#include "tensor/ops.h"
#include "tensor/ops_nn.h"

namespace nl {

namespace {
// Rows of the last dim: throws unless x can be normalised over it and weight/bias are [H] like x.
int64_t check_norm_args(const char* op, const Tensor& x, const Tensor& weight, const Tensor& bias,
                        const LayerNormOptions& o) {
  check_floating(x, op);
  if (x.dim() < 1 || x.size(-1) < (o.unbiased ? 2 : 1))
    throw std::invalid_argument(std::string(op) + ": last dim of " + shape_str(x.shape()) + " is too small to normalise");
  const int64_t H = x.size(-1);
  check_like(op, x, {&weight, &bias}, "weight and bias");
  for (const Tensor* p : {&weight, &bias})
    if (p->defined() && p->shape() != Shape{H})
      throw std::invalid_argument(std::string(op) + ": weight and bias must be [" + std::to_string(H) + "], got " +
                                  shape_str(p->shape()));
  return H;
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
  const bool accumulate = acc.defined() && acc.shape() == x.shape() && acc.dtype() == x.dtype() &&
                          acc.device() == x.device() && acc.is_contiguous();
  LayerNormGrads g{accumulate ? acc.view({R, H}) : Tensor::empty({R, H}, x.dtype(), x.device()), Tensor(), Tensor()};
  if (want_weight && w.defined()) g.weight = Tensor::empty({H}, x.dtype(), x.device());
  if (want_bias) g.bias = Tensor::empty({H}, x.dtype(), x.device());
  fused_for(x2).layer_norm_backward(g.x.desc(), opt_desc(g.weight), opt_desc(g.bias), gc.desc(), x2.desc(),
                                    mean.contiguous().desc(), rstd.contiguous().desc(), opt_desc(w), o, accumulate);
  if (accumulate) acc.bump_version();
  g.x = accumulate ? acc : g.x.view(x.shape());
  return g;
}

}  // namespace nl
