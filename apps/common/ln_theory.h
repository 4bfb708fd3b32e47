#pragma once
// `normlab ln-theory hessian | ssr | merge`: the analysis tools of Ni et al. 2024 ("On the
// Nonlinearity of Layer Normalization"; ../shared/docs/ni-pn-details.md §1-3). Each report is built
// from the library in src/nn/theory/ and returned as markdown text; apps/commands/ln_theory.cpp only
// parses flags.
#include <cstdint>
#include <string>
#include <vector>

namespace nlapp {

/// `ln-theory hessian`: closed form vs numerical H for LN and LN-G, and the Proposition's bound.
struct HessianConfig {
  int64_t d = 12;                ///< feature dim (3..256)
  std::vector<int64_t> groups;   ///< group numbers g to show; empty = every divisor of d with d/g >= 2
  double eps = 1e-5;             ///< the eps rows (the eps = 0 rows are always shown)
  int samples = 200;             ///< random inputs for the Proposition check (1..1e6)
  uint64_t seed = 0;
};
/// The two tables. Throws std::invalid_argument on d outside [3, 256], a g that does not divide d or leaves
/// groups of size < 2, eps < 0 or samples outside [1, 1e6] (each message names the flag).
std::string hessian_report(const HessianConfig& cfg);

/// `ln-theory ssr`: the toy table and the "LN breaks the linear bound" demonstration.
struct SsrConfig {
  int per_class = 100;  ///< points per class in each toy set (2..5000)
  int trials = 200;     ///< random Linear(2,3) + LN draws in the demonstration (1..100000)
  uint64_t seed = 0;
};
/// Throws std::invalid_argument on per_class outside [2, 5000] or trials outside [1, 100000].
std::string ssr_report(const SsrConfig& cfg);

/// `ln-theory merge`: the projection-merge LN-Net on XOR and on random instances.
struct MergeConfig {
  int instances = 100;   ///< random instances (0..100000)
  int64_t m_min = 3, m_max = 40;  ///< instance sizes cycle through m_min..m_max (1 <= m_min <= m_max <= 1000)
  int64_t dim = 2;       ///< input dimension of the random instances (1..1000)
  uint64_t seed = 0;
};
/// Throws std::invalid_argument on values outside the ranges above.
std::string merge_report(const MergeConfig& cfg);

/// Where float64 rounding ends the exact construction: for every m of `ms`, `instances` random instances of
/// size m in R^2 drawn as `ln-theory merge --instances N --m-min m --m-max m --seed S` draws them, and the
/// table merge_report prints for them (accuracy of the built network, smallest read-out margin). The
/// generated table of docs/ln-theory.md. Throws std::invalid_argument on instances outside [1, 1000] or an
/// m outside [1, 1000].
std::string merge_limit_table(const std::vector<int64_t>& ms, int instances, uint64_t seed = 0);

}  // namespace nlapp
