// SSR / LSSR (Ni et al. 2024; notes §1): known values, the Fisher-LDA closed form against a brute-force
// angle search, invariance under invertible linear maps, exact 2-D separability and the toy sets.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "nn/theory/ssr.h"
#include "nn/theory/sym_eigen.h"
#include "nn/theory/toy_sets.h"

using namespace nl::lntheory;

namespace {

// Two anisotropic, overlapping Gaussian classes in R^d.
void gaussian_classes(int64_t d, int m, uint64_t seed, Points& X1, Points& X2) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> N;
  X1.clear();
  X2.clear();
  for (int k = 0; k < m; ++k) {
    std::vector<double> a((size_t)d), b((size_t)d);
    for (int64_t j = 0; j < d; ++j) {
      a[(size_t)j] = (1.0 + (double)j) * N(rng) + 0.3 * (double)j;
      b[(size_t)j] = (1.0 + (double)j) * N(rng) - 0.5 + 0.6 * N(rng);
    }
    X1.push_back(a);
    X2.push_back(b);
  }
  // correlate the coordinates so the LDA direction is not an axis
  for (Points* X : {&X1, &X2})
    for (auto& p : *X) p[0] += 0.8 * p[1];
}

Points apply(const Points& X, const std::vector<std::vector<double>>& A, const std::vector<double>& b) {
  Points out;
  for (const auto& p : X) {
    std::vector<double> q(A.size(), 0.0);
    for (size_t i = 0; i < A.size(); ++i) {
      q[i] = b[i];
      for (size_t j = 0; j < p.size(); ++j) q[i] += A[i][j] * p[j];
    }
    out.push_back(q);
  }
  return out;
}

}  // namespace

TEST_CASE("ln-theory: SS and SSR by hand", "[lntheory][ssr]") {
  const Points X1 = {{0}, {2}}, X2 = {{4}, {6}};
  CHECK(sum_squares(X1) == 2.0);
  CHECK(ssr(X1, X2) == Approx(4.0 / 20.0).epsilon(1e-15));  // pooled mean 3: 9 + 1 + 1 + 9 = 20
  // In 1-D every linear map is a scaling, so LSSR = SSR.
  CHECK(lssr(X1, X2).value == Approx(0.2).epsilon(1e-12));
  // Classes with equal means: no projection separates them at all (LSSR = 1).
  CHECK(lssr({{1, 0}, {-1, 0}}, {{0, 1}, {0, -1}}).value == Approx(1.0).epsilon(1e-12));
}

TEST_CASE("ln-theory: LSSR closed form equals a brute-force search over projection angles on 2-D data", "[lntheory][ssr]") {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    Points X1, X2;
    gaussian_classes(2, 40 + 10 * (int)seed, seed, X1, X2);
    const Lssr l = lssr(X1, X2);
    const double brute = lssr_brute_force_2d(X1, X2);
    INFO("seed " << seed << " closed " << l.value << " brute " << brute);
    CHECK(l.value == Approx(brute).epsilon(1e-9));
    CHECK(ssr_projected(X1, X2, l.direction) == Approx(l.value).epsilon(1e-9));  // attained by its direction
    CHECK(l.value <= ssr(X1, X2) + 1e-12);                                       // a lower bound of SSR
    CHECK(l.value > 0.05);                                                        // overlapping: not trivial
  }
}

TEST_CASE("ln-theory: LSSR is invariant under an invertible linear map and can only grow under a singular one",
          "[lntheory][ssr]") {
  Points X1, X2;
  gaussian_classes(3, 60, 11, X1, X2);
  const double base = lssr(X1, X2).value;
  const std::vector<std::vector<double>> A = {{2, -1, 0.5}, {0.3, 4, 1}, {-1, 0.2, 0.1}};  // det != 0
  const std::vector<double> b = {5, -3, 100};
  const double mapped = lssr(apply(X1, A, b), apply(X2, A, b)).value;
  CHECK(mapped == Approx(base).epsilon(1e-9));
  CHECK(std::fabs(ssr(apply(X1, A, b), apply(X2, A, b)) - ssr(X1, X2)) > 1e-3);  // SSR itself is not invariant
  // Lifted into R^5 (injective, not square): still equal; projected to a line: >= (information lost).
  const std::vector<std::vector<double>> L = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}, {0, 2, -1}};
  CHECK(lssr(apply(X1, L, {0, 0, 0, 0, 0}), apply(X2, L, {0, 0, 0, 0, 0})).value == Approx(base).epsilon(1e-9));
  const std::vector<std::vector<double>> P = {{1, 0, 0}};
  CHECK(lssr(apply(X1, P, {0}), apply(X2, P, {0})).value >= base - 1e-12);
}

TEST_CASE("ln-theory: exact 2-D linear separability and the toy sets", "[lntheory][ssr]") {
  Points X;
  std::vector<int> y;
  xor_corners(X, y);
  CHECK_FALSE(linearly_separable_2d({X[0], X[3]}, {X[1], X[2]}));
  CHECK(linearly_separable_2d({X[0], X[1]}, {X[2], X[3]}));
  CHECK(linearly_separable_2d({{0, 0}}, {{1e-6, 0}}));
  CHECK_FALSE(linearly_separable_2d({{0, 0}, {2, 0}}, {{1, 0}}));  // collinear, in between
  const std::vector<ToySet> sets = slide_toy_sets(0, 100);
  REQUIRE(sets.size() == 4);
  CHECK(sets[0].name.find("XOR") != std::string::npos);
  for (const ToySet& s : sets) {
    INFO(s.name);
    CHECK(linearly_separable_2d(s.X1, s.X2) == s.slide_separable);
    CHECK(lssr(s.X1, s.X2).value <= ssr(s.X1, s.X2) + 1e-12);
  }
  CHECK(lssr(sets[0].X1, sets[0].X2).value > 0.95);  // XOR: no linear map helps
  CHECK(lssr(sets[3].X1, sets[3].X2).value < 0.5 * ssr(sets[3].X1, sets[3].X2));  // strips: LSSR << SSR
}

TEST_CASE("ln-theory: the symmetric eigensolver reconstructs its matrix", "[lntheory][ssr]") {
  const std::vector<double> A = {4, 1, 0.5, 1, 3, -1, 0.5, -1, 2};
  const SymEigen e = sym_eigen(A, 3);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += e.vectors[i * 3 + k] * e.values[k] * e.vectors[j * 3 + k];
      CHECK(s == Approx(A[i * 3 + j]).margin(1e-12));
    }
  CHECK_THROWS_WITH(sym_eigen({1, 2, 3, 4}, 2), Catch::Contains("not symmetric"));
}

TEST_CASE("ln-theory: bad SSR inputs give clear errors", "[lntheory][ssr]") {
  CHECK_THROWS_WITH(ssr({}, {{1.0}}), Catch::Contains("class 1 is empty"));
  CHECK_THROWS_WITH(ssr({{1.0}}, {{1.0, 2.0}}), Catch::Contains("dimensional"));
  CHECK_THROWS_WITH(ssr({{1.0}, {1.0, 2.0}}, {{1.0}}), Catch::Contains("one dimension"));
  CHECK_THROWS_WITH(ssr({{1.0}}, {{1.0}}), Catch::Contains("coincide"));
  CHECK_THROWS_WITH(lssr({{NAN}}, {{1.0}}), Catch::Contains("non-finite"));
  CHECK_THROWS_WITH(lssr_brute_force_2d({{1.0}}, {{2.0}}), Catch::Contains("2-D"));
}
