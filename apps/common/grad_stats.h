#pragma once
// `normlab grad stats`: Theorem 1 of Xu et al. 2019 over many random (x, g): per variant and input
// scale, the mean and variance of dL/dx (by autograd through the fused kernels, float64) next to the
// theory's prediction, and the share of samples in which each (in)equality holds.
#include <cstdint>
#include <string>
#include <vector>

#include "nn/norm/theory.h"

namespace nlapp {

struct StatsConfig {
  std::vector<std::string> norms;          ///< names of nl::layernorm_family_names()
  int64_t H = 512;                         ///< features per sample (>= 2)
  int64_t samples = 10000;                 ///< random (x, g) pairs per scale (>= 1)
  uint64_t seed = 1;
  std::vector<double> scales{1.0, 10.0, 0.1};  ///< x is multiplied by each (sigma scales with it)
  nl::theory::Estimator est;               ///< paper (default) or the released code's
  double C = 2.0, k = 0.1;                 ///< AdaNorm
  int64_t chunk = 1000;                    ///< samples per fused call (rows of one [chunk, H] batch)
};

/// One (variant, scale) cell: averages over the samples of the per-sample statistics.
struct StatsRow {
  std::string norm;
  double scale = 1;
  int64_t samples = 0;
  double sigma = 0;                   ///< mean scale (the estimator's D; the paper's sigma for "paper")
  double mean = 0, pred_mean = 0;     ///< mean over samples of mean(dL/dx) and of its prediction
  double var = 0, pred_var = 0;       ///< ... of var(dL/dx) and of its prediction (or bound)
  double max_mean_err = 0;            ///< largest |mean(dL/dx) - prediction| / (sqrt(D_g)/sigma + |gbar|/sigma)
  double max_var_excess = 0;          ///< largest (var - prediction) / (D_g/sigma^2); <= 0 when a bound holds
  double mean_share = 0, var_share = 0;  ///< fraction of samples where the statement holds
  nl::theory::Prediction pred;        ///< relations and statement (values of the last sample)
};

/// Draws, per sample, x = scale (a N(0,1) + b) with a ~ U(0.5, 2), b ~ N(0,1) per row and
/// g = N(0,1) + m with m ~ N(0.5, 1) per row (so gbar is not 0), from nl::manual_seed(seed); the same
/// base (x, g) for every scale and variant. dL/dx comes from one fused forward/backward per chunk.
/// Rows are ordered by norm, then scale. Throws std::invalid_argument on an unknown norm, H < 2,
/// samples < 1, chunk < 1, a scale <= 0, or a C or k that check_adanorm_options refuses.
std::vector<StatsRow> gradient_stats(const StatsConfig& cfg);

/// One markdown table per variant (rows: scales), headed by the statement of Theorem 1 it checks.
std::string format_stats(const std::vector<StatsRow>& rows, const StatsConfig& cfg);

}  // namespace nlapp
