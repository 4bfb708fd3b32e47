#pragma once
// The Hessian nonlinearity measure of Ni et al. 2024 ("On the Nonlinearity of Layer Normalization",
// ICML 2024; ../shared/docs/ni-pn-details.md §2) for LayerNorm (LN) and group-based LN (LN-G):
//
//   H(f; x) = sum_i || d^2 y_i / dx^2 ||_F^2      (§2, definition [S]; H = 0 iff f is linear)
//
// computed two ways: by the closed forms of §2 (our derivation [D]) and numerically through normlab's
// own modules (nl::LayerNormG in float64): the Jacobian by reverse-mode autograd, its derivative by
// central finite differences. Plain float64 vectors in, one number out.
#include <cstdint>
#include <functional>
#include <vector>

#include "autograd/variable.h"

namespace nl::lntheory {

/// Closed-form H of LN-G with `groups` contiguous groups over x [d] (groups = 1: LN), biased
/// variance, eps inside the sqrt, per-feature gain `gain` [d] (empty = all ones; the bias has no
/// effect). Per group of size n with u = x - mean, U^2 = ||u||^2, v = U^2/n, r = sqrt(v + eps),
/// A = 1/(n r^3), B = 3/(n^2 r^5) (§2, "With a per-channel gain"):
///   H_group = sum_i gain_i^2 [A^2 (2(1 - 1/n) U^2 + (n + 5) u_i^2) - 6 A B u_i^2 U^2 + B^2 u_i^2 U^4];
/// LN-G sums the groups (§2, "LN-G sums the per-group values"). With gain 1 this is §2's
/// (1/n)[3(n+1) v/r^6 - 18 v^2/r^8 + 9 v^3/r^10], and with eps = 0 also 3(n-2)/(n sigma^4).
/// Throws std::invalid_argument on groups not dividing d, a gain of another size, eps < 0, a
/// non-finite entry, or a constant group with eps = 0 (H is infinite there: add eps or perturb x).
double lng_hessian_closed(const std::vector<double>& x, int64_t groups, double eps,
                          const std::vector<double>& gain = {});

/// The eps = 0, gain-1 form of §2: sum over groups of 3(n - 2)/(n sigma_g^4) (sigma_g the biased
/// std of group g). Throws as lng_hessian_closed.
double lng_hessian_eps0(const std::vector<double>& x, int64_t groups);

/// A map R^d -> R^d applied to every row of a [R, d] float64 Variable (rows independent).
using RowMap = std::function<Variable(const Variable&)>;

/// Numerical H(f; x) for a row map f: the Jacobian J(x) [d, d] by one reverse-mode pass over d copies
/// of x (row i of the gradient is dy_i/dx), and d^2 y_i/dx_a dx_b = (J_ia(x + h e_b) - J_ia(x - h e_b))/2h.
/// Truncation error O(h^2), rounding O(1e-16/h): h around 1e-4 times the input's scale suits float64.
/// Throws std::invalid_argument on h <= 0, an empty x, or f returning another shape.
double hessian_numeric(const RowMap& f, const std::vector<double>& x, double h);

/// Numerical H of nl::LayerNormG(d, groups, eps) in float64 with its gain set to `gain` (empty = 1):
/// hessian_numeric with h = 1e-4 * the smallest group scale sqrt(sigma_g^2 + eps). Throws as
/// lng_hessian_closed.
double lng_hessian_numeric(const std::vector<double>& x, int64_t groups, double eps,
                           const std::vector<double>& gain = {});

/// The Proposition's lower bound on H(LN-G with g groups; x)/H(LN; x) for eps = 0 and no gain (§2,
/// "Why the Proposition holds" [D]): g (d - 2g)/(d - 2), valid for every x. Throws
/// std::invalid_argument unless d >= 3 and g divides d with group size d/g >= 2.
double proposition_bound(int64_t d, int64_t groups);

}  // namespace nl::lntheory
