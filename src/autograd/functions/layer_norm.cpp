// The fused LayerNorm-family op: one kernel forward, the closed-form backward of Xu et al. 2019
// (appendix B: W1 for LayerNorm-simple, W2 detach-mean, W3 detach-variance, I/sigma DetachNorm).
// Its composite twin (primitive ops + detach) lives in nn/norm/layer_norm.cpp; tests hold them equal.
#include "autograd/functions.h"

namespace nl {

Variable layer_norm_fused(const Variable& x, const LayerNormOptions& o) {
  if (x.dim() < 1 || x.size(-1) < (o.unbiased ? 2 : 1))
    throw std::invalid_argument("layer_norm: last dim of " + shape_str(x.shape()) + " is too small to normalise");
  Tensor xc = x.data().contiguous();
  const int64_t H = xc.size(-1), R = xc.numel() / H;
  Tensor x2 = xc.view({R, H});
  Tensor y = Tensor::empty({R, H}, xc.dtype(), xc.device());
  Tensor mu = Tensor::empty({R}, xc.dtype(), xc.device()), rstd = Tensor::empty({R}, xc.dtype(), xc.device());
  backend_for(xc.device().type).fused().layer_norm(y.desc(), mu.desc(), rstd.desc(), x2.desc(), o);
  std::string note = std::string(o.detach_mean ? "detach_mean " : "") + (o.detach_std ? "detach_std " : "") +
                     (o.unbiased ? "unbiased " : "biased ") + (o.eps_inside ? "eps_in_sqrt" : "eps_on_std");
  return make_result(y.view(xc.shape()), "LayerNormFused", {x},
                     [x2, mu, rstd, o](const Tensor& g, const std::vector<bool>&) {
                       Tensor gc = g.contiguous();
                       Tensor gx = Tensor::empty(x2.shape(), x2.dtype(), x2.device());
                       backend_for(x2.device().type)
                           .fused().layer_norm_backward(gx.desc(), gc.view(x2.shape()).desc(), x2.desc(), mu.desc(),
                                                rstd.desc(), o);
                       return std::vector<Tensor>{gx.view(g.shape())};
                     },
                     {saved(xc, "input x"), saved(mu, "mean"), saved(rstd, "1/D")}, note);
}

}  // namespace nl
