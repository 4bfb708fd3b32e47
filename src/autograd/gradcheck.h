#pragma once
// gradcheck: compares autograd's gradients with central finite differences, in float64.
#include <functional>
#include <string>
#include <vector>

#include "autograd/variable.h"

namespace nl {

/// Result of a gradient check: the largest absolute and relative errors, and where they occurred.
struct GradcheckResult {
  bool ok = true;
  double max_abs_err = 0, max_rel_err = 0;
  std::string report;  ///< first mismatches, "input i, element j: analytic a vs numeric n"
};

/// Checks d(sum(f(inputs) * w))/d(inputs) for a fixed random weighting w, element by element, against
/// (f(x+h) - f(x-h)) / 2h. Inputs must be float64 leaves with requires_grad. A pair passes when
/// |a - n| <= atol + rtol * |n|. Throws std::invalid_argument on non-float64 inputs.
GradcheckResult gradcheck(const std::function<Variable(const std::vector<Variable>&)>& f,
                          const std::vector<Variable>& inputs, double eps = 1e-6, double atol = 1e-7,
                          double rtol = 1e-5);

}  // namespace nl
