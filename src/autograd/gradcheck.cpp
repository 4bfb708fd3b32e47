#include "autograd/gradcheck.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "autograd/functions.h"

namespace nl {

GradcheckResult gradcheck(const std::function<Variable(const std::vector<Variable>&)>& f,
                          const std::vector<Variable>& inputs, double eps, double atol, double rtol) {
  for (const auto& v : inputs)
    if (v.dtype() != DType::Float64 || !v.requires_grad())
      throw std::invalid_argument("gradcheck: inputs must be float64 leaves with requires_grad=true");
  // A fixed random projection makes every output element matter, not just their sum.
  Variable out0 = f(inputs);
  auto [s, o] = rng_state();
  Tensor w = Tensor::randn(out0.shape(), 0.0, 1.0, DType::Float64).to(out0.data().device());
  set_rng_state(s, o);
  auto scalar = [&](const std::vector<Variable>& in) { return sum(mul(f(in), Variable(w))); };
  for (auto v : inputs) v.zero_grad();
  scalar(inputs).backward();

  GradcheckResult r;
  std::ostringstream rep;
  int shown = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor x = inputs[i].data();
    if (!x.is_contiguous()) throw std::invalid_argument("gradcheck: inputs must be contiguous");
    Tensor ga = inputs[i].grad().defined() ? inputs[i].grad().to(Device::cpu()).contiguous()
                                           : Tensor::zeros(x.shape(), DType::Float64);
    const double* a = ga.data<double>();
    // Host tensors are perturbed in place through the pointer; device tensors one element view at a time.
    const Tensor xh = x.to(Device::cpu());
    const double* x0 = xh.data<double>();
    double* xp = x.device().is_cpu() ? x.data<double>() : nullptr;
    const Tensor xflat = x.view({-1});
    auto set = [&](int64_t j, double v) {
      if (xp)
        xp[j] = v;
      else
        xflat.slice(0, j, j + 1).fill_(v);
    };
    for (int64_t j = 0; j < x.numel(); ++j) {
      const double keep = x0[j];
      double fp, fm;
      {
        NoGradGuard ng;
        set(j, keep + eps);
        fp = scalar(inputs).item();
        set(j, keep - eps);
        fm = scalar(inputs).item();
        set(j, keep);
      }
      const double num = (fp - fm) / (2 * eps);
      const double err = std::abs(a[j] - num);
      r.max_abs_err = std::max(r.max_abs_err, err);
      r.max_rel_err = std::max(r.max_rel_err, err / std::max(std::abs(num), 1e-12));
      if (err > atol + rtol * std::abs(num)) {
        r.ok = false;
        if (shown++ < 5) rep << "input " << i << ", element " << j << ": analytic " << a[j] << " vs numeric " << num << "\n";
      }
    }
  }
  r.report = rep.str();
  return r;
}

}  // namespace nl
