#pragma once
// `normlab grad batch-stats <task>`: Shen et al. 2020, Figure 2 and the gradient-norm figure of the
// released repository (ni-pn-details.md §6.4), for any task. Trains one fresh model per norm variant and
// records per update, at one batch-statistic norm layer (watched through its batch-statistics hook,
// MaskedNorm::register_batch_stats_hook):
//   mean_dist = (1/d) ||mu_B - mu||         (batchnorm; batch vs running mean, before this update),
//   var_dist  = (1/d) ||sigma_B^2 - sigma^2|| (batchnorm) or (1/d) ||psi_B^2 - psi^2|| (power norms),
//   grad_mean = (1/d) ||dL/dmu_B||,  grad_var = (1/d) ||dL/dsigma_B^2|| (batchnorm) or ||dL/dpsi_B^2||
//   (powernorm-v); null where the statistic does not exist or carries no gradient (powernorm's
//   approximate backward, seed-code.md §2.3).
// d = the layer's features; with --update-freq k the k forwards of an update are averaged. Writes
// <out>/<norm>.jsonl and <out>/<norm>.svg per variant, and <out>/var-dist.svg and <out>/grad-var.svg
// comparing the variants.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/task.h"
#include "nn/norm/masked_norm.h"

namespace nlapp {

struct BatchStatsProbeConfig {
  std::vector<std::string> norms;  ///< batch-statistic norms (batchnorm, powernorm-v, powernorm)
  int64_t steps = 300;             ///< training updates per variant (>= 1)
  std::string layer;               ///< dotted module name; "" = the first batch-statistic norm
  std::filesystem::path out = "results/batch-stats";
  bool quiet = false;              ///< no progress lines
};

/// "all" -> batchnorm, powernorm-v, powernorm; otherwise a comma-separated list, in the given order
/// (checked by run_batch_stats_probe). Throws std::invalid_argument on an empty list.
std::vector<std::string> parse_batch_stat_norms(const std::string& spec);

/// The four quantities of one forward (see the file comment); NaN where not defined. Needs the
/// gradients of stats.mean / stats.var retained and computed (retain_grad() before backward).
struct BatchStatsValues {
  double mean_dist = 0, var_dist = 0, grad_mean = 0, grad_var = 0;
};
/// Computes BatchStatsValues from one hook call's statistics (after backward for the gradients).
BatchStatsValues batch_stats_values(const nl::BatchStats& stats);

/// One record: {"step", "loss", "mean_dist", "var_dist", "grad_mean", "grad_var"} (NaN -> null).
nlohmann::json batch_stats_record(int64_t step, double loss, const BatchStatsValues& v);

struct BatchStatsRun {
  std::string norm;
  std::vector<nlohmann::json> records;  ///< one per update, as written to <out>/<norm>.jsonl
  std::filesystem::path jsonl, svg;
};

/// Trains one fresh model per variant for cfg.steps updates with the task's `settings`
/// (settings["norm"] replaced by each variant; same seed; no checkpoints) and writes the files above.
/// Stops a variant early (keeping its records) if the loss becomes non-finite. Throws
/// std::invalid_argument on a norm that is not a batch-statistic norm, an unknown or non-batch-statistic
/// layer, or steps < 1; std::runtime_error on I/O failure.
std::vector<BatchStatsRun> run_batch_stats_probe(Task& task, const nlohmann::json& settings,
                                                 const BatchStatsProbeConfig& cfg);

/// A markdown table: per variant, the run averages of the four quantities.
std::string format_batch_stats_summary(const std::vector<BatchStatsRun>& runs);

}  // namespace nlapp
