// H(f; x) of LN / LN-G (Ni et al. 2024; notes §2): the closed forms against normlab's numerical
// second derivative, hand values, group size 2 and the Proposition's bound.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "autograd/functions.h"
#include "nn/theory/ln_hessian.h"

using namespace nl;
using namespace nl::lntheory;

namespace {

std::vector<double> grouped_x(int64_t d, int64_t groups, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> N;
  std::uniform_real_distribution<double> U(0.5, 2.0);
  std::vector<double> x((size_t)d);
  for (int64_t g = 0, n = d / groups; g < groups; ++g) {
    const double s = U(rng), o = N(rng);
    for (int64_t i = 0; i < n; ++i) x[(size_t)(g * n + i)] = o + s * N(rng);
  }
  return x;
}

double rel(double a, double b) { return std::fabs(a - b) / std::max(1.0, std::fabs(a)); }

}  // namespace

TEST_CASE("ln-theory: closed-form H equals the numerical H (float64) for LN and LN-G with and without eps and gain",
          "[lntheory][hessian]") {
  const int64_t d = 12;
  uint64_t seed = 1;
  for (int64_t g : {1, 2, 3, 4, 6})
    for (double eps : {0.0, 0.3})
      for (bool with_gain : {false, true}) {
        const std::vector<double> x = grouped_x(d, g, seed++);
        std::vector<double> gain;
        if (with_gain)
          for (int64_t k = 0; k < d; ++k) gain.push_back(0.5 + 0.1 * (double)k);
        const double hc = lng_hessian_closed(x, g, eps, gain), hn = lng_hessian_numeric(x, g, eps, gain);
        INFO("g " << g << " eps " << eps << " gain " << with_gain << " closed " << hc << " numerical " << hn);
        CHECK(rel(hc, hn) < 1e-6);
        if (g < 6 || eps > 0) CHECK(hc > 1e-3);  // a real, non-trivial value (group size 2 with eps 0 is 0)
      }
}

TEST_CASE("ln-theory: H of LN by hand and by the special forms of the notes", "[lntheory][hessian]") {
  // x = (-1, 0, 1): sigma^2 = 2/3, H = 3(n-2)/(n sigma^4) = 3/(3 * 4/9) = 9/4.
  CHECK(lng_hessian_closed({-1, 0, 1}, 1, 0.0) == Approx(2.25).epsilon(1e-14));
  CHECK(lng_hessian_numeric({-1, 0, 1}, 1, 0.0) == Approx(2.25).epsilon(1e-8));
  // Gain-1 closed form = §2's eps form (1/n)[3(n+1) v/r^6 - 18 v^2/r^8 + 9 v^3/r^10], and the eps = 0 form.
  const std::vector<double> x = grouped_x(8, 1, 7);
  double mu = 0, v = 0;
  for (double t : x) mu += t / 8;
  for (double t : x) v += (t - mu) * (t - mu) / 8;
  const double eps = 0.2, r2 = v + eps;
  const double eps_form = (3 * 9 * v / std::pow(r2, 3) - 18 * v * v / std::pow(r2, 4) + 9 * v * v * v / std::pow(r2, 5)) / 8;
  CHECK(lng_hessian_closed(x, 1, eps) == Approx(eps_form).epsilon(1e-12));
  CHECK(lng_hessian_closed(x, 1, 0.0) == Approx(3.0 * 6 / (8 * v * v)).epsilon(1e-12));
  CHECK(lng_hessian_eps0(x, 1) == Approx(3.0 * 6 / (8 * v * v)).epsilon(1e-12));
  // A uniform gain gamma scales H by gamma^2.
  CHECK(lng_hessian_closed(x, 1, eps, std::vector<double>(8, 3.0)) == Approx(9 * eps_form).epsilon(1e-12));
}

TEST_CASE("ln-theory: the numerical H of a known map (y = x^2 elementwise: H = 4d)", "[lntheory][hessian]") {
  const std::vector<double> x = {0.3, -1.2, 2.0, 0.7, -0.1};
  CHECK(hessian_numeric([](const Variable& X) { return square(X); }, x, 1e-4) == Approx(20.0).epsilon(1e-8));
  CHECK(hessian_numeric([](const Variable& X) { return X * 2.0 + 1.0; }, x, 1e-4) == Approx(0.0).margin(1e-12));
}

TEST_CASE("ln-theory: H = 0 for group size 2 with eps = 0 (outputs are +-gain), not with eps > 0", "[lntheory][hessian]") {
  // Notes §2: "H is 0 for group size 2, since the outputs are +-1" - a statement about eps = 0.
  const std::vector<double> x = grouped_x(8, 4, 3);
  const std::vector<double> gain = {0.5, 2, 1, 3, 0.7, 1.1, 1.3, 0.9};
  CHECK(lng_hessian_closed(x, 4, 0.0) == Approx(0.0).margin(1e-12));
  CHECK(lng_hessian_closed(x, 4, 0.0, gain) == Approx(0.0).margin(1e-12));
  CHECK(lng_hessian_numeric(x, 4, 0.0, gain) == Approx(0.0).margin(1e-9));
  // With eps the group's outputs are +-|u|/sqrt(u^2 + eps): per group H = (9v/2) eps^2/(v + eps)^5 (our derivation
  // from §2's eps form with n = 2), so LN-G with group size 2 is only linear in the eps = 0 limit.
  const double eps = 0.5;
  double expected = 0;
  for (int g = 0; g < 4; ++g) {
    const double half = (x[2 * g] - x[2 * g + 1]) / 2, v = half * half;
    expected += 4.5 * v * eps * eps / std::pow(v + eps, 5);
  }
  CHECK(expected > 1e-6);
  CHECK(lng_hessian_closed(x, 4, eps) == Approx(expected).epsilon(1e-12));
  CHECK(rel(lng_hessian_numeric(x, 4, eps), expected) < 1e-6);
}

TEST_CASE("ln-theory: the Proposition's bound H_G/H_L >= g(d-2g)/(d-2) holds on random inputs", "[lntheory][hessian]") {
  CHECK(proposition_bound(12, 3) == Approx(1.8));
  CHECK(proposition_bound(12, 6) == 0.0);
  for (int64_t d : {12, 16, 24})
    for (int64_t g = 1; g <= d / 2; ++g) {
      if (d % g) continue;
      const double bound = proposition_bound(d, g);
      if (3 * g <= d) CHECK(bound >= 1.0 - 1e-12);                // slide claim for g <= d/3
      if (4 * g == d) CHECK(bound > (double)d / 8);               // slide claim for g = d/4
      for (uint64_t s = 0; s < 50; ++s) {
        const std::vector<double> x = grouped_x(d, g, 100 * (uint64_t)d + 7 * (uint64_t)g + s);
        CHECK(lng_hessian_eps0(x, g) / lng_hessian_eps0(x, 1) >= bound * (1 - 1e-12));
      }
    }
  // Equality when every group has the same mean and variance (Jensen and the variance split are tight).
  const std::vector<double> x = {-1, 0, 1, -1, 0, 1, -1, 0, 1};
  CHECK(lng_hessian_eps0(x, 3) / lng_hessian_eps0(x, 1) == Approx(proposition_bound(9, 3)).epsilon(1e-12));
}

TEST_CASE("ln-theory: bad Hessian inputs give clear errors", "[lntheory][hessian]") {
  CHECK_THROWS_WITH(lng_hessian_closed({1, 1, 1}, 1, 0.0), Catch::Contains("constant") && Catch::Contains("eps > 0"));
  CHECK_NOTHROW(lng_hessian_closed({1, 1, 1}, 1, 0.1));
  CHECK_THROWS_WITH(lng_hessian_closed({1, 2, 3, 4}, 3, 0.0), Catch::Contains("divide"));
  CHECK_THROWS_WITH(lng_hessian_closed({1, 2, 3}, 1, -1.0), Catch::Contains("eps"));
  CHECK_THROWS_WITH(lng_hessian_closed({1, 2, 3}, 1, 0.0, {1, 2}), Catch::Contains("one gain per feature"));
  CHECK_THROWS_WITH(lng_hessian_closed({1, NAN, 3}, 1, 0.0), Catch::Contains("non-finite"));
  CHECK_THROWS_WITH(proposition_bound(12, 5), Catch::Contains("divid"));
  CHECK_THROWS_WITH(hessian_numeric([](const Variable& X) { return X; }, {1.0}, 0.0), Catch::Contains("h must"));
}
