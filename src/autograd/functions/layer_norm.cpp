// The fused LayerNorm-family op: one kernel forward, the closed-form backward of Xu et al. 2019
// (appendix B: W1 for LayerNorm-simple, W2 detach-mean, W3 detach-variance, I/sigma DetachNorm).
// Its composite twin (primitive ops + detach) lives in nn/norm/layer_norm.cpp; tests hold them equal.
#include "autograd/functions.h"
#include "autograd/functions/opt_desc.h"

namespace nl {

Variable layer_norm_fused(const Variable& x, const LayerNormOptions& o, const Variable& weight, const Variable& bias) {
  if (x.dim() < 1 || x.size(-1) < (o.unbiased ? 2 : 1))
    throw std::invalid_argument("layer_norm: last dim of " + shape_str(x.shape()) + " is too small to normalise");
  Tensor xc = x.data().contiguous();
  const int64_t H = xc.size(-1), R = xc.numel() / H;
  for (const Variable* p : {&weight, &bias})
    if (p->defined() && (p->dim() != 1 || p->size(0) != H || p->dtype() != xc.dtype() || p->device() != xc.device()))
      throw std::invalid_argument("layer_norm: weight and bias must be [" + std::to_string(H) + "] of the input's dtype "
                                  "and device (got " + shape_str(p->shape()) + " " + dtype_name(p->dtype()) + ")");
  Tensor w = weight.defined() ? weight.data().contiguous() : Tensor();
  Tensor b = bias.defined() ? bias.data().contiguous() : Tensor();
  Tensor x2 = xc.view({R, H});
  Tensor y = Tensor::empty({R, H}, xc.dtype(), xc.device());
  Tensor mu = Tensor::empty({R}, xc.dtype(), xc.device()), rstd = Tensor::empty({R}, xc.dtype(), xc.device());
  backend_for(xc.device().type).fused().layer_norm(y.desc(), mu.desc(), rstd.desc(), x2.desc(), opt_desc(w), opt_desc(b), o);
  std::string note = std::string(o.detach_mean ? "detach_mean " : "") + (o.detach_std ? "detach_std " : "") +
                     (o.unbiased ? "unbiased " : "biased ") + (o.eps_inside ? "eps_in_sqrt" : "eps_on_std") +
                     (w.defined() ? " affine" : "");
  std::vector<Variable> inputs{x};
  if (weight.defined()) inputs.push_back(weight);
  if (bias.defined()) inputs.push_back(bias);
  std::vector<SavedTensor> keep{saved(xc, "input x"), saved(mu, "mean"), saved(rstd, "1/D")};
  if (w.defined()) keep.push_back(saved(w, "weight"));
  const bool has_b = b.defined();
  return make_result(y.view(xc.shape()), "LayerNormFused", inputs,
                     [x2, mu, rstd, w, has_b, o](const Tensor& g, const std::vector<bool>& need) {
                       Tensor gc = g.contiguous();
                       const int64_t H = x2.size(1);
                       Tensor gx = Tensor::empty(x2.shape(), x2.dtype(), x2.device());
                       size_t k = 1;
                       Tensor gw, gb;
                       if (w.defined() && need[k++]) gw = Tensor::empty({H}, x2.dtype(), x2.device());
                       if (has_b && need[k++]) gb = Tensor::empty({H}, x2.dtype(), x2.device());
                       backend_for(x2.device().type)
                           .fused().layer_norm_backward(gx.desc(), opt_desc(gw), opt_desc(gb), gc.view(x2.shape()).desc(), x2.desc(),
                                                mu.desc(), rstd.desc(), opt_desc(w), o);
                       std::vector<Tensor> r{gx.view(g.shape())};
                       if (w.defined()) r.push_back(gw);
                       if (has_b) r.push_back(gb);
                       return r;
                     },
                     std::move(keep), note);
}

}  // namespace nl
