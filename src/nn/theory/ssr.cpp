// SSR / LSSR of two-class data (notes §1); formulas in ssr.h.
#include "nn/theory/ssr.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "nn/theory/sym_eigen.h"

namespace nl::lntheory {
namespace {

// Checks one class and returns its dimension.
int64_t check_points(const Points& X, const char* who, const char* which) {
  if (X.empty()) throw std::invalid_argument(std::string(who) + ": " + which + " is empty; each class needs a point");
  const size_t d = X[0].size();
  if (d == 0) throw std::invalid_argument(std::string(who) + ": " + which + " has 0-dimensional points");
  for (const auto& p : X) {
    if (p.size() != d)
      throw std::invalid_argument(std::string(who) + ": " + which + " mixes points of dimension " + std::to_string(d) +
                                  " and " + std::to_string(p.size()) + "; all points need one dimension");
    for (double v : p)
      if (!std::isfinite(v)) throw std::invalid_argument(std::string(who) + ": " + which + " has a non-finite coordinate");
  }
  return (int64_t)d;
}

int64_t check_pair(const Points& X1, const Points& X2, const char* who) {
  const int64_t d = check_points(X1, who, "class 1"), d2 = check_points(X2, who, "class 2");
  if (d != d2)
    throw std::invalid_argument(std::string(who) + ": class 1 is " + std::to_string(d) + "-dimensional but class 2 is " +
                                std::to_string(d2) + "-dimensional");
  return d;
}

std::vector<double> mean_of(const Points& X) {
  std::vector<double> m(X[0].size(), 0.0);
  for (const auto& p : X)
    for (size_t k = 0; k < m.size(); ++k) m[k] += p[k];
  for (double& v : m) v /= (double)X.size();
  return m;
}

Points project(const Points& X, const std::vector<double>& v) {
  Points out;
  out.reserve(X.size());
  for (const auto& p : X) {
    double s = 0;
    for (size_t k = 0; k < v.size(); ++k) s += v[k] * p[k];
    out.push_back({s});
  }
  return out;
}

// Scatter sum_i (x_i - mean)(x_i - mean)^T added into S (d x d, row-major).
void add_scatter(const Points& X, std::vector<double>& S) {
  const size_t d = X[0].size();
  const std::vector<double> m = mean_of(X);
  for (const auto& p : X)
    for (size_t a = 0; a < d; ++a)
      for (size_t b = 0; b < d; ++b) S[a * d + b] += (p[a] - m[a]) * (p[b] - m[b]);
}

}  // namespace

double sum_squares(const Points& X) {
  check_points(X, "sum_squares", "the point set");
  const std::vector<double> m = mean_of(X);
  double ss = 0;
  for (const auto& p : X)
    for (size_t k = 0; k < m.size(); ++k) ss += (p[k] - m[k]) * (p[k] - m[k]);
  return ss;
}

double ssr(const Points& X1, const Points& X2) {
  check_pair(X1, X2, "ssr");
  Points all = X1;
  all.insert(all.end(), X2.begin(), X2.end());
  const double total = sum_squares(all);
  if (total == 0) throw std::invalid_argument("ssr: all points coincide (total sum of squares 0), SSR is undefined");
  return (sum_squares(X1) + sum_squares(X2)) / total;
}

double ssr_projected(const Points& X1, const Points& X2, const std::vector<double>& v) {
  const int64_t d = check_pair(X1, X2, "ssr_projected");
  if ((int64_t)v.size() != d)
    throw std::invalid_argument("ssr_projected: direction has " + std::to_string(v.size()) + " entries, points have " +
                                std::to_string(d));
  return ssr(project(X1, v), project(X2, v));
}

Lssr lssr(const Points& X1, const Points& X2) {
  const int64_t d = check_pair(X1, X2, "lssr");
  const double m1 = (double)X1.size(), m2 = (double)X2.size(), c = m1 * m2 / (m1 + m2);
  std::vector<double> S((size_t)(d * d), 0.0);  // S_T = S_W + c Delta Delta^T
  add_scatter(X1, S);
  add_scatter(X2, S);
  const std::vector<double> a = mean_of(X1), b = mean_of(X2);
  std::vector<double> delta((size_t)d);
  for (int64_t k = 0; k < d; ++k) delta[(size_t)k] = a[(size_t)k] - b[(size_t)k];
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j) S[(size_t)(i * d + j)] += c * delta[(size_t)i] * delta[(size_t)j];
  const SymEigen e = sym_eigen(S, d);
  const double top = *std::max_element(e.values.begin(), e.values.end());
  if (!(top > 0)) throw std::invalid_argument("lssr: all points coincide (total scatter 0), LSSR is undefined");
  // v = S_T^+ Delta = sum_k (q_k . Delta / lambda_k) q_k over the non-null eigenvectors q_k.
  std::vector<double> v((size_t)d, 0.0);
  double quad = 0;  // Delta^T S_T^+ Delta
  for (int64_t k = 0; k < d; ++k) {
    const double lam = e.values[(size_t)k];
    if (lam <= 1e-12 * top) continue;
    double proj = 0;
    for (int64_t i = 0; i < d; ++i) proj += e.vectors[(size_t)(i * d + k)] * delta[(size_t)i];
    quad += proj * proj / lam;
    for (int64_t i = 0; i < d; ++i) v[(size_t)i] += proj / lam * e.vectors[(size_t)(i * d + k)];
  }
  Lssr out;
  out.value = std::clamp(1.0 - c * quad, 0.0, 1.0);
  double norm = 0;
  for (double x : v) norm += x * x;
  norm = std::sqrt(norm);
  if (norm > 0)
    for (double& x : v) x /= norm;
  out.direction = std::move(v);
  return out;
}

double lssr_brute_force_2d(const Points& X1, const Points& X2, int steps) {
  if (check_pair(X1, X2, "lssr_brute_force_2d") != 2)
    throw std::invalid_argument("lssr_brute_force_2d: needs 2-D points (it searches projection angles in the plane)");
  if (steps < 8) throw std::invalid_argument("lssr_brute_force_2d: steps must be >= 8, got " + std::to_string(steps));
  auto f = [&](double t) { return ssr_projected(X1, X2, {std::cos(t), std::sin(t)}); };
  const double pi = std::acos(-1.0), dt = pi / steps;
  double best_t = 0, best = f(0);
  for (int s = 1; s < steps; ++s) {
    const double v = f(s * dt);
    if (v < best) best = v, best_t = s * dt;
  }
  // Golden-section search on [best_t - dt, best_t + dt] (SSR is smooth in t away from degenerate v).
  double lo = best_t - dt, hi = best_t + dt;
  const double r = (std::sqrt(5.0) - 1) / 2;
  for (int it = 0; it < 100; ++it) {
    const double t1 = hi - r * (hi - lo), t2 = lo + r * (hi - lo);
    if (f(t1) < f(t2)) hi = t2; else lo = t1;
  }
  return std::min(best, f((lo + hi) / 2));
}

bool linearly_separable_2d(const Points& X1, const Points& X2) {
  if (check_pair(X1, X2, "linearly_separable_2d") != 2)
    throw std::invalid_argument("linearly_separable_2d: needs 2-D points");
  const double pi = std::acos(-1.0);
  std::vector<double> crit;
  for (const auto& a : X1)
    for (const auto& b : X2) {
      const double dx = a[0] - b[0], dy = a[1] - b[1];
      if (dx == 0 && dy == 0) return false;  // the same point in both classes
      crit.push_back(std::fmod(std::atan2(dy, dx) + pi / 2 + 2 * pi, pi));
    }
  std::sort(crit.begin(), crit.end());
  auto separates = [&](double t) {
    const double c = std::cos(t), s = std::sin(t);
    double max1 = -INFINITY, min1 = INFINITY, max2 = -INFINITY, min2 = INFINITY;
    for (const auto& p : X1) max1 = std::max(max1, c * p[0] + s * p[1]), min1 = std::min(min1, c * p[0] + s * p[1]);
    for (const auto& p : X2) max2 = std::max(max2, c * p[0] + s * p[1]), min2 = std::min(min2, c * p[0] + s * p[1]);
    return max1 < min2 || max2 < min1;
  };
  for (size_t k = 0; k < crit.size(); ++k) {
    const double next = k + 1 < crit.size() ? crit[k + 1] : crit[0] + pi;
    if (next > crit[k] && separates((crit[k] + next) / 2)) return true;
  }
  return false;
}

}  // namespace nl::lntheory
