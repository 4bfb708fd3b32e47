// Closed-form and numerical Hessian measure of LN / LN-G; formulas in ln_hessian.h (notes §2).
#include "nn/theory/ln_hessian.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "autograd/functions.h"
#include "autograd/tape.h"
#include "nn/norm/group_norm.h"

namespace nl::lntheory {
namespace {

struct GroupStats {
  double mean = 0, U2 = 0;  // mean and ||x - mean||^2 of one group
};

GroupStats group_stats(const double* x, int64_t n) {
  GroupStats s;
  for (int64_t i = 0; i < n; ++i) s.mean += x[i];
  s.mean /= (double)n;
  for (int64_t i = 0; i < n; ++i) s.U2 += (x[i] - s.mean) * (x[i] - s.mean);
  return s;
}

void check_inputs(const std::vector<double>& x, int64_t groups, double eps, const std::vector<double>& gain,
                  const char* who) {
  const int64_t d = (int64_t)x.size();
  if (d < 1) throw std::invalid_argument(std::string(who) + ": x is empty; pass at least one feature");
  check_groups(d, groups, who);
  if (!(eps >= 0) || !std::isfinite(eps))
    throw std::invalid_argument(std::string(who) + ": eps must be a finite number >= 0, got " + std::to_string(eps));
  if (!gain.empty() && (int64_t)gain.size() != d)
    throw std::invalid_argument(std::string(who) + ": gain has " + std::to_string(gain.size()) + " entries but x has " +
                                std::to_string(d) + "; pass one gain per feature or none");
  for (double v : x)
    if (!std::isfinite(v)) throw std::invalid_argument(std::string(who) + ": x has a non-finite entry; pass finite values");
  for (double v : gain)
    if (!std::isfinite(v)) throw std::invalid_argument(std::string(who) + ": gain has a non-finite entry");
  const int64_t n = d / groups;
  for (int64_t g = 0; g < groups && eps == 0; ++g)
    if (group_stats(x.data() + g * n, n).U2 == 0)
      throw std::invalid_argument(std::string(who) + ": group " + std::to_string(g) +
                                  " of x is constant and eps = 0, where LN is not differentiable (H is infinite); "
                                  "use eps > 0 or an x with spread in every group");
}

}  // namespace

double lng_hessian_closed(const std::vector<double>& x, int64_t groups, double eps, const std::vector<double>& gain) {
  check_inputs(x, groups, eps, gain, "lng_hessian_closed");
  const int64_t d = (int64_t)x.size(), n = d / groups;
  const double nd = (double)n;
  double H = 0;
  for (int64_t g = 0; g < groups; ++g) {
    const double* xg = x.data() + g * n;
    const GroupStats s = group_stats(xg, n);
    const double r = std::sqrt(s.U2 / nd + eps);
    const double A = 1.0 / (nd * r * r * r), B = 3.0 / (nd * nd * std::pow(r, 5));
    for (int64_t i = 0; i < n; ++i) {
      const double u2 = (xg[i] - s.mean) * (xg[i] - s.mean);
      const double S = A * A * (2.0 * (1.0 - 1.0 / nd) * s.U2 + (nd + 5.0) * u2) - 6.0 * A * B * u2 * s.U2 +
                       B * B * u2 * s.U2 * s.U2;
      const double gi = gain.empty() ? 1.0 : gain[(size_t)(g * n + i)];
      H += gi * gi * S;
    }
  }
  return H;
}

double lng_hessian_eps0(const std::vector<double>& x, int64_t groups) {
  check_inputs(x, groups, 0.0, {}, "lng_hessian_eps0");
  const int64_t n = (int64_t)x.size() / groups;
  double H = 0;
  for (int64_t g = 0; g < groups; ++g) {
    const double var = group_stats(x.data() + g * n, n).U2 / (double)n;
    H += 3.0 * (double)(n - 2) / ((double)n * var * var);
  }
  return H;
}

double hessian_numeric(const RowMap& f, const std::vector<double>& x, double h) {
  const int64_t d = (int64_t)x.size();
  if (d < 1) throw std::invalid_argument("hessian_numeric: x is empty; pass at least one feature");
  if (!(h > 0) || !std::isfinite(h))
    throw std::invalid_argument("hessian_numeric: step h must be a finite number > 0, got " + std::to_string(h));
  // J(p) [d, d]: d copies of p, one backward with the identity as upstream gradient.
  auto jacobian = [&](const std::vector<double>& p) {
    std::vector<double> rows((size_t)(d * d));
    for (int64_t i = 0; i < d; ++i) std::copy(p.begin(), p.end(), rows.begin() + i * d);
    Variable X(Tensor::from_vector(rows, {d, d}), /*requires_grad=*/true);
    Variable Y = f(X);
    if (Y.shape() != Shape{d, d})
      throw std::invalid_argument("hessian_numeric: f must map [R, d] to [R, d]; got another shape for d = " +
                                  std::to_string(d));
    Tensor eye = Tensor::zeros({d, d}, DType::Float64);
    double* e = eye.data<double>();
    for (int64_t i = 0; i < d; ++i) e[i * d + i] = 1.0;
    Y.backward(eye);
    return X.grad().contiguous().to_vector<double>();
  };
  double H = 0;
  std::vector<double> xp = x, xm = x;
  for (int64_t b = 0; b < d; ++b) {
    xp[(size_t)b] = x[(size_t)b] + h;
    xm[(size_t)b] = x[(size_t)b] - h;
    const std::vector<double> Jp = jacobian(xp), Jm = jacobian(xm);
    for (size_t k = 0; k < Jp.size(); ++k) {
      const double second = (Jp[k] - Jm[k]) / (2.0 * h);  // d^2 y_i / dx_a dx_b, k = i*d + a
      H += second * second;
    }
    xp[(size_t)b] = xm[(size_t)b] = x[(size_t)b];
  }
  return H;
}

double lng_hessian_numeric(const std::vector<double>& x, int64_t groups, double eps, const std::vector<double>& gain) {
  check_inputs(x, groups, eps, gain, "lng_hessian_numeric");
  const int64_t d = (int64_t)x.size(), n = d / groups;
  LayerNormG norm(d, GroupNormConfig{groups, eps, /*affine=*/true}, DType::Float64);
  if (!gain.empty()) {
    NoGradGuard ng;
    norm.weight.set_data(Tensor::from_vector(gain, {d}));
  }
  double scale = INFINITY;
  for (int64_t g = 0; g < groups; ++g)
    scale = std::min(scale, std::sqrt(group_stats(x.data() + g * n, n).U2 / (double)n + eps));
  return hessian_numeric([&](const Variable& X) { return norm(X); }, x, 1e-4 * scale);
}

double proposition_bound(int64_t d, int64_t groups) {
  if (d < 3 || groups < 1 || d % groups != 0 || d / groups < 2)
    throw std::invalid_argument("proposition_bound: needs d >= 3 and a group number g dividing d with group size "
                                "d/g >= 2; got d = " + std::to_string(d) + ", g = " + std::to_string(groups));
  return (double)groups * (double)(d - 2 * groups) / (double)(d - 2);
}

}  // namespace nl::lntheory
