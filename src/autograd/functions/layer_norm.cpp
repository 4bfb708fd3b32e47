// The fused LayerNorm-family op: one kernel forward, the closed-form backward of Xu et al. 2019
// (appendix B: W1 for LayerNorm-simple, W2 detach-mean, W3 detach-variance, I/sigma DetachNorm).
// Its composite twin (primitive ops + detach) lives in nn/norm/layer_norm.cpp; tests hold them equal.
#include "autograd/functions.h"
#include "tensor/ops_nn.h"

namespace nl {

Variable layer_norm_fused(const Variable& x, const LayerNormOptions& o, const Variable& weight, const Variable& bias) {
  Tensor w = weight.defined() ? weight.data() : Tensor(), b = bias.defined() ? bias.data() : Tensor();
  Tensor xc = x.data().contiguous();  // saved for backward as the kernel reads it
  LayerNormResult r = layer_norm(xc, w, b, o);
  std::string note = std::string(o.detach_mean ? "detach_mean " : "") + (o.detach_std ? "detach_std " : "") +
                     (o.unbiased ? "unbiased " : "biased ") + (o.eps_inside ? "eps_in_sqrt" : "eps_on_std") +
                     (w.defined() ? " affine" : "");
  std::vector<Variable> inputs{x};
  if (weight.defined()) inputs.push_back(weight);
  if (bias.defined()) inputs.push_back(bias);
  std::vector<SavedTensor> keep{saved(xc, "input x"), saved(r.mean, "mean"), saved(r.rstd, "1/D")};
  if (w.defined()) keep.push_back(saved(w, "weight"));
  const bool has_b = b.defined();
  return make_result(r.y, "LayerNormFused", inputs,
                     [xc, mu = r.mean, rstd = r.rstd, w, has_b, o](const Tensor& g, const std::vector<bool>& need) {
                       size_t k = 1;
                       const bool want_w = w.defined() && need[k++];
                       const bool want_b = has_b && need[k++];
                       // dx added in the kernel's pass to the gradient x has already received (the residual
                       // stream's, when x feeds a residual add too): no separate add pass
                       LayerNormGrads gr = layer_norm_backward(g, xc, mu, rstd, w, o, want_w, want_b,
                                                               need[0] ? accumulated_gradient(0) : Tensor());
                       std::vector<Tensor> out{gr.x};
                       if (w.defined()) out.push_back(gr.weight);
                       if (has_b) out.push_back(gr.bias);
                       return out;
                     },
                     std::move(keep), note);
}

}  // namespace nl
