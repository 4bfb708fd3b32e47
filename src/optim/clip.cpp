#include "optim/clip.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "autograd/tape.h"
#include "tensor/ops.h"

namespace nl {

namespace {
double host_sum_sq(const Tensor& g) {
  double s = 0;
  dispatch_floating(g.dtype(), "grad_norm", [&](auto tag) {
    using T = decltype(tag);
    const T* p = g.data<T>();
    const int64_t n = g.numel();
    for (int64_t i = 0; i < n; ++i) s += (double)p[i] * (double)p[i];
  });
  return s;
}
}  // namespace

double grad_norm(const std::vector<Variable>& params) {
  double total = 0;
  Tensor on_device;  // float64 scalar: the squared sums of the gradients that live on a device
  for (const auto& p : params) {
    if (!p.defined() || !p.grad().defined()) continue;
    const Tensor& g = p.grad();
    if (g.device().is_cpu() && g.is_contiguous()) {
      total += host_sum_sq(g);
      continue;
    }
    // On the gradient's device, in float64 (float32 gradients square without rounding; the backends'
    // sums accumulate in double, over many blocks for a long gradient): nothing comes back per parameter.
    const Tensor d = g.to(DType::Float64);
    const Tensor s = sum(mul(d, d));
    on_device = on_device.defined() ? add(on_device, s) : s;
  }
  if (on_device.defined()) total += on_device.item();  // the one device -> host copy of the clip
  return std::sqrt(total);
}

double clip_grad_norm_(const std::vector<Variable>& params, double max_norm) {
  if (!(max_norm >= 0)) throw std::invalid_argument("clip_grad_norm_: max_norm must be >= 0, got " + std::to_string(max_norm));
  NoGradGuard no_grad;
  const double total = grad_norm(params);
  const double coef = max_norm / (total + 1e-6);
  if (coef < 1 || std::isnan(coef))
    for (auto p : params)
      if (p.defined() && p.grad().defined()) p.set_grad((p.grad() * coef).contiguous());
  return total;
}

}  // namespace nl
