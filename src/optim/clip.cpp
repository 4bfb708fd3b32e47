#include "optim/clip.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "autograd/tape.h"
#include "tensor/ops.h"

namespace nl {

namespace {
double sum_sq(const Tensor& g) {
  if (g.device().is_cpu() && g.is_contiguous()) {
    double s = 0;
    dispatch_floating(g.dtype(), "grad_norm", [&](auto tag) {
      using T = decltype(tag);
      const T* p = g.data<T>();
      const int64_t n = g.numel();
      for (int64_t i = 0; i < n; ++i) s += (double)p[i] * (double)p[i];
    });
    return s;
  }
  // Elsewhere on the gradient's device (float64, so float32 gradients square without rounding; the
  // backends' sums accumulate in double): one scalar comes back instead of the whole gradient.
  const Tensor d = g.to(DType::Float64);
  return sum(mul(d, d)).item();
}
}  // namespace

double grad_norm(const std::vector<Variable>& params) {
  double total = 0;
  for (const auto& p : params)
    if (p.defined() && p.grad().defined()) total += sum_sq(p.grad());
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
