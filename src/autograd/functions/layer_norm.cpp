// The fused LayerNorm-family op: one kernel forward, the closed-form backward of Xu et al. 2019
// (appendix B: W1 for LayerNorm-simple, W2 detach-mean, W3 detach-variance, I/sigma DetachNorm), over rows
// (layer_norm_fused) or over the channel groups of NCHW images (layer_norm_channels_fused, LN-G).
// Its composite twin (primitive ops + detach) lives in nn/norm/layer_norm.cpp; tests hold them equal.
#include "autograd/functions.h"
#include "tensor/ops_nn.h"

namespace nl {

namespace {
// The node of either layout: `forward(xc, w, b)` runs the kernel; `backward(g, xc, mean, rstd, w, want_w,
// want_b, accumulate_into)` its closed form. Saves x, mean, 1/D and the weight.
template <typename Forward, typename Backward>
Variable layer_norm_node(const char* name, const Variable& x, const LayerNormOptions& o, const Variable& weight,
                         const Variable& bias, Forward forward, Backward backward) {
  Tensor w = weight.defined() ? weight.data() : Tensor(), b = bias.defined() ? bias.data() : Tensor();
  Tensor xc = x.data().contiguous();  // saved for backward as the kernel reads it
  LayerNormResult r = forward(xc, w, b);
  std::string note = std::string(o.detach_mean ? "detach_mean " : "") + (o.detach_std ? "detach_std " : "") +
                     (o.unbiased ? "unbiased " : "biased ") + (o.eps_inside ? "eps_in_sqrt" : "eps_on_std") +
                     (w.defined() ? " affine" : "");
  std::vector<Variable> inputs{x};
  if (weight.defined()) inputs.push_back(weight);
  if (bias.defined()) inputs.push_back(bias);
  std::vector<SavedTensor> keep{saved(xc, "input x"), saved(r.mean, "mean"), saved(r.rstd, "1/D")};
  if (w.defined()) keep.push_back(saved(w, "weight"));
  const bool has_b = b.defined();
  return make_result(r.y, name, inputs,
                     [xc, mu = r.mean, rstd = r.rstd, w, has_b, backward](const Tensor& g, const std::vector<bool>& need) {
                       size_t k = 1;
                       const bool want_w = w.defined() && need[k++];
                       const bool want_b = has_b && need[k++];
                       // dx added in the kernel's pass to the gradient x has already received (the residual
                       // stream's, when x feeds a residual add too): no separate add pass
                       LayerNormGrads gr = backward(g, xc, mu, rstd, w, want_w, want_b,
                                                    need[0] ? accumulated_gradient(0) : Tensor());
                       std::vector<Tensor> out{gr.x};
                       if (w.defined()) out.push_back(gr.weight);
                       if (has_b) out.push_back(gr.bias);
                       return out;
                     },
                     std::move(keep), note);
}
}  // namespace

Variable layer_norm_fused(const Variable& x, const LayerNormOptions& o, const Variable& weight, const Variable& bias) {
  return layer_norm_node(
      "LayerNormFused", x, o, weight, bias,
      [&](const Tensor& xc, const Tensor& w, const Tensor& b) { return layer_norm(xc, w, b, o); },
      [o](const Tensor& g, const Tensor& xc, const Tensor& mu, const Tensor& rstd, const Tensor& w, bool want_w,
          bool want_b, const Tensor& acc) { return layer_norm_backward(g, xc, mu, rstd, w, o, want_w, want_b, acc); });
}

Variable layer_norm_channels_fused(const Variable& x, int64_t groups, const LayerNormOptions& o,
                                   const Variable& weight, const Variable& bias) {
  return layer_norm_node(
      "LayerNormChannels", x, o, weight, bias,
      [&](const Tensor& xc, const Tensor& w, const Tensor& b) { return layer_norm_channels(xc, w, b, groups, o); },
      [o, groups](const Tensor& g, const Tensor& xc, const Tensor& mu, const Tensor& rstd, const Tensor& w,
                  bool want_w, bool want_b, const Tensor& acc) {
        return layer_norm_channels_backward(g, xc, mu, rstd, w, groups, o, want_w, want_b, acc);
      });
}

}  // namespace nl
