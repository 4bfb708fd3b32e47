#pragma once
// SSR and LSSR of two-class data (Ni et al. 2024, ../shared/docs/ni-pn-details.md §1):
//
//   SS(X) = sum_i ||x_i - mean(X)||^2,   SSR(X1, X2) = (SS(X1) + SS(X2)) / SS([X1, X2])       (§1 [S])
//   LSSR(X1, X2) = inf over linear maps phi of SSR(phi(X1), phi(X2))                          (§1 [S])
//
// LSSR by the Fisher-LDA closed form (§1, "Closed form" [D]): with S_W the pooled within-class
// scatter, Delta = mean(X1) - mean(X2), m = m1 + m2 and S_T = S_W + (m1 m2/m) Delta Delta^T,
//   LSSR = 1 - (m1 m2/m) Delta^T S_T^+ Delta,   attained by the projection v = S_T^+ Delta.
// A linear map psi gives LSSR(psi X1, psi X2) >= LSSR(X1, X2), with equality for invertible psi.
#include <cstdint>
#include <vector>

namespace nl::lntheory {

/// A set of points, one std::vector<double> per point, all of one dimension.
using Points = std::vector<std::vector<double>>;

/// SS(X) = sum_i ||x_i - mean||^2 (§1). Throws std::invalid_argument on an empty set, points of
/// different dimensions or a non-finite coordinate.
double sum_squares(const Points& X);

/// SSR(X1, X2) in [0, 1] (§1). Throws std::invalid_argument on an empty class, mismatched
/// dimensions, non-finite values, or all points equal (SS of the union is 0: SSR undefined).
double ssr(const Points& X1, const Points& X2);

/// SSR of the 1-D projections v^T X1, v^T X2 (the quantity LSSR minimises). Throws as ssr, and
/// when v has another dimension or the projections are all equal.
double ssr_projected(const Points& X1, const Points& X2, const std::vector<double>& v);

/// LSSR and a minimising projection direction (unit length).
struct Lssr {
  double value = 0;
  std::vector<double> direction;
};
/// LSSR(X1, X2) by the Fisher-LDA closed form above (S_T^+ through a symmetric eigendecomposition;
/// eigenvalues below 1e-12 times the largest count as 0, so data on a lower-dimensional subspace,
/// e.g. LN outputs, is fine). Throws as ssr.
Lssr lssr(const Points& X1, const Points& X2);

/// Brute-force LSSR on 2-D data: SSR of the projection on (cos t, sin t) over `steps` angles in
/// [0, pi), then a golden-section refinement around the best one. A test oracle for lssr(). Throws
/// std::invalid_argument unless the points are 2-D and steps >= 8 (and as ssr).
double lssr_brute_force_2d(const Points& X1, const Points& X2, int steps = 20000);

/// Whether two 2-D point sets are strictly linearly separable, decided exactly: separating
/// directions form an open arc whose ends are normals of pairwise differences, so it suffices to test
/// one direction inside each arc between consecutive critical angles. O(m^2 log m + m^3) for m points
/// (fine for a few hundred). Throws std::invalid_argument unless the points are 2-D and both sets
/// non-empty.
bool linearly_separable_2d(const Points& X1, const Points& X2);

}  // namespace nl::lntheory
