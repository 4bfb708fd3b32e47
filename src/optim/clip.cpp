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

// acc += Σ g² of a gradient on its device, in float64 (float32 gradients square without rounding; the
// backends' sums accumulate in double, over many blocks for a long gradient); acc is a 0-d tensor there
// (undefined: none yet) and nothing comes back to the host.
void add_device_sum_sq(Tensor& acc, const Tensor& g) {
  const Tensor d = g.to(DType::Float64);
  const Tensor s = sum(mul(d, d));
  acc = acc.defined() ? add(acc, s) : s;
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
    add_device_sum_sq(on_device, g);  // nothing comes back per parameter
  }
  if (on_device.defined()) total += on_device.item();  // the one device -> host copy of the clip
  return std::sqrt(total);
}

namespace {
void check_max_norm(double max_norm) {
  if (!(max_norm >= 0)) throw std::invalid_argument("clip_grad_norm_: max_norm must be >= 0, got " + std::to_string(max_norm));
}

// The device of the gradients of `params` (cpu when there are none); throws when they are on several.
Device grads_device(const std::vector<Variable>& params) {
  const Variable* first = nullptr;
  for (const auto& p : params)
    if (p.defined() && p.grad().defined()) {
      if (!first) first = &p;
      else if (p.grad().device() != first->grad().device())
        throw std::invalid_argument("clip_grad_norm_: gradients on " + first->grad().device().str() + " and " +
                                    p.grad().device().str() + "; move the model to one device");
    }
  return first ? first->grad().device() : Device::cpu();
}
}  // namespace

double clip_grad_norm_(const std::vector<Variable>& params, double max_norm) {
  check_max_norm(max_norm);
  NoGradGuard no_grad;
  const double total = grad_norm(params);
  const double coef = max_norm / (total + 1e-6);
  if (coef < 1 || std::isnan(coef))
    for (auto p : params)
      if (p.defined() && p.grad().defined()) p.set_grad((p.grad() * coef).contiguous());
  return total;
}

Tensor clip_grad_norm_async_(const std::vector<Variable>& params, double max_norm) {
  check_max_norm(max_norm);
  const Device dev = grads_device(params);
  if (dev.is_cpu()) return Tensor::scalar(clip_grad_norm_(params, max_norm), DType::Float64);
  NoGradGuard no_grad;
  Tensor acc;  // Σ g² in float64 on the device
  for (const auto& p : params)
    if (p.defined() && p.grad().defined()) add_device_sum_sq(acc, p.grad());
  const Tensor total = sqrt(acc);
  const Tensor coef = div(Tensor::scalar(max_norm, DType::Float64, dev), affine(total, 1.0, 1e-6));
  const Tensor clips = gt(add(lt(coef, Tensor::scalar(1.0, DType::Float64, dev)), ne(coef, coef)), 0.0);  // coef < 1 or NaN
  for (auto p : params)
    if (p.defined() && p.grad().defined()) {
      const Tensor& g = p.grad();
      const Tensor scaled = affine(mul(g, coef.to(g.dtype())), 1.0, 0.0);  // grad · coef + 0, as grad * coef
      p.set_grad(where(clips.to(g.dtype()), scaled, g).contiguous());
    }
  return total;
}

}  // namespace nl
