// The fused norm ops: one kernel forward, a closed-form backward. The LayerNorm family (Xu et al. 2019,
// appendix B: W1 for LayerNorm-simple, W2 detach-mean, W3 detach-variance, I/sigma DetachNorm) over rows
// (layer_norm_fused) or over the channel groups of NCHW images (layer_norm_channels_fused, LN-G); its
// composite twin (primitive ops + detach) lives in nn/norm/layer_norm.cpp; tests hold them equal. And
// BatchNorm's training step over the channels of images (batch_norm_channels_fused, Ioffe & Szegedy 2015).
#include <type_traits>

#include "autograd/functions.h"
#include "tensor/ops_nn.h"

namespace nl {

namespace {
// The node of every fused norm: `forward(xc, w, b)` runs the kernel and returns its result r (r.y, r.mean,
// r.rstd; a copy goes to *out when given); `backward(g, xc, mean, rstd, w, want_w, want_b,
// accumulate_into)` its closed form. Saves x, mean, rstd and the weight.
template <typename Forward, typename Backward, typename Result = std::invoke_result_t<Forward, Tensor, Tensor, Tensor>>
Variable norm_node(const char* name, std::string note, const Variable& x, const Variable& weight, const Variable& bias,
                   Forward forward, Backward backward, Result* out = nullptr) {
  Tensor w = weight.defined() ? weight.data() : Tensor(), b = bias.defined() ? bias.data() : Tensor();
  Tensor xc = x.data().contiguous();  // saved for backward as the kernel reads it
  Result r = forward(xc, w, b);
  if (out) *out = r;
  if (w.defined()) note += " affine";
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
// The tape note of a LayerNorm-family node: its flags.
std::string options_note(const LayerNormOptions& o) {
  return std::string(o.detach_mean ? "detach_mean " : "") + (o.detach_std ? "detach_std " : "") +
         (o.unbiased ? "unbiased " : "biased ") + (o.eps_inside ? "eps_in_sqrt" : "eps_on_std");
}
}  // namespace

Variable layer_norm_fused(const Variable& x, const LayerNormOptions& o, const Variable& weight, const Variable& bias) {
  return norm_node(
      "LayerNormFused", options_note(o), x, weight, bias,
      [&](const Tensor& xc, const Tensor& w, const Tensor& b) { return layer_norm(xc, w, b, o); },
      [o](const Tensor& g, const Tensor& xc, const Tensor& mu, const Tensor& rstd, const Tensor& w, bool want_w,
          bool want_b, const Tensor& acc) { return layer_norm_backward(g, xc, mu, rstd, w, o, want_w, want_b, acc); });
}

Variable layer_norm_channels_fused(const Variable& x, int64_t groups, const LayerNormOptions& o,
                                   const Variable& weight, const Variable& bias) {
  return norm_node(
      "LayerNormChannels", options_note(o), x, weight, bias,
      [&](const Tensor& xc, const Tensor& w, const Tensor& b) { return layer_norm_channels(xc, w, b, groups, o); },
      [o, groups](const Tensor& g, const Tensor& xc, const Tensor& mu, const Tensor& rstd, const Tensor& w,
                  bool want_w, bool want_b, const Tensor& acc) {
        return layer_norm_channels_backward(g, xc, mu, rstd, w, groups, o, want_w, want_b, acc);
      });
}

BatchNormStep batch_norm_channels_fused(const Variable& x, double eps, const Variable& weight, const Variable& bias) {
  BatchNormResult r;
  Variable y = norm_node(
      "BatchNormChannels", "batch statistics, eps=" + std::to_string(eps), x, weight, bias,
      [&](const Tensor& xc, const Tensor& w, const Tensor& b) { return batch_norm_channels(xc, w, b, eps); },
      [](const Tensor& g, const Tensor& xc, const Tensor& mu, const Tensor& rstd, const Tensor& w, bool want_w,
         bool want_b, const Tensor& acc) { return batch_norm_channels_backward(g, xc, mu, rstd, w, want_w, want_b, acc); },
      &r);
  return {y, r.mean, r.var};
}

}  // namespace nl
