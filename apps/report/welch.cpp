#include "report/welch.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace nlapp {
namespace {

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / (double)v.size();
}

// The continued fraction of I_x(a, b) (modified Lentz), converging for x < (a + 1) / (a + b + 2).
double beta_cf(double a, double b, double x) {
  const double tiny = 1e-300, eps = 1e-15;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 10000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a - 1 + m2) * (a + m2));  // even step
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));  // odd step
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < eps) break;
  }
  return h;
}

// Regularised incomplete beta I_x(a, b) for x in [0, 1].
double inc_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_cf(a, b, x) / a;
  return 1 - front * beta_cf(b, a, 1 - x) / b;
}

}  // namespace

double sample_std(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / (double)(v.size() - 1));
}

double student_t_two_sided_p(double t, double df) {
  if (!(df > 0)) throw std::invalid_argument("student_t_two_sided_p: df must be > 0, got " + std::to_string(df));
  if (std::isinf(t)) return 0;
  return inc_beta(df / 2, 0.5, df / (df + t * t));
}

WelchResult welch_t_test(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 2 || b.size() < 2)
    throw std::invalid_argument("welch_t_test: needs at least two values per sample (got " + std::to_string(a.size()) +
                                " and " + std::to_string(b.size()) + "); run more seeds");
  WelchResult r;
  const double na = (double)a.size(), nb = (double)b.size();
  const double va = std::pow(sample_std(a), 2) / na, vb = std::pow(sample_std(b), 2) / nb;
  r.diff = mean(a) - mean(b);
  if (va + vb == 0) {
    r.df = na + nb - 2;
    r.t = r.diff == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), r.diff);
    r.p = r.diff == 0 ? 1 : 0;
    return r;
  }
  r.t = r.diff / std::sqrt(va + vb);
  r.df = (va + vb) * (va + vb) / (va * va / (na - 1) + vb * vb / (nb - 1));
  r.p = student_t_two_sided_p(r.t, r.df);
  return r;
}

}  // namespace nlapp
