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
  Tensor w = Tensor::randn(out0.shape(), 0.0, 1.0, DType::Float64);
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
    Tensor ga = inputs[i].grad().defined() ? inputs[i].grad().contiguous() : Tensor::zeros(x.shape(), DType::Float64);
    const double* a = ga.data<double>();
    double* xp = x.data<double>();
    for (int64_t j = 0; j < x.numel(); ++j) {
      const double keep = xp[j];
      double fp, fm;
      {
        NoGradGuard ng;
        xp[j] = keep + eps;
        fp = scalar(inputs).item();
        xp[j] = keep - eps;
        fm = scalar(inputs).item();
        xp[j] = keep;
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
