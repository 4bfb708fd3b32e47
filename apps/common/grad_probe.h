#pragma once
// `normlab grad probe mnist`: Theorem 1 live. Trains the CNN of Xu et al. 2019 (appendix A.3; Adam,
// batch 32) and records per step, at the norm layer, the statistics of the gradient arriving at the
// norm's output (g) and leaving it at its input (dL/dx), per row (one image, over the H features)
// and averaged over the batch. Writes <out>/<norm>.jsonl and <out>/<norm>.svg per variant and
// <out>/mean-dx.svg comparing mean(dL/dx) across variants.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/image_dataset.h"
#include "tensor/tensor.h"

namespace nlapp {

struct ProbeConfig {
  std::vector<std::string> norms;  ///< names of nl::norm_names()
  int64_t steps = 300;             ///< training updates per variant (>= 1)
  int64_t batch_size = 32;
  double lr = 1e-3;
  uint64_t seed = 1;
  double C = 2.0;                  ///< AdaNorm's scale (paper's MNIST setting)
  std::filesystem::path out = "results/grad-probe";
  bool quiet = false;              ///< no per-variant progress lines
};

/// Per-row statistics averaged over the batch (each row: one image's H hidden features).
/// g = gradient arriving at the norm output, dx = gradient leaving it (at the norm input x).
struct ProbeStats {
  double x_sigma = 0;                          ///< biased std of x
  double g_mean = 0, g_abs_mean = 0, g_var = 0;  ///< mean, |mean| and (biased) variance of g
  double dx_mean = 0, dx_abs_mean = 0, dx_var = 0;
  double pred_abs_mean = 0, pred_var = 0;      ///< |gbar|/sigma and D_g/sigma^2: DetachNorm's |mean| and var
};

/// Computes ProbeStats from x, g and dx of shape [B, H] (any float dtype; computed in float64).
/// Throws std::invalid_argument unless all three are 2-d with the same shape and H >= 2.
ProbeStats probe_stats(const nl::Tensor& x, const nl::Tensor& g, const nl::Tensor& dx);

/// One step's record: {"step", "loss", then every ProbeStats field by name}.
nlohmann::json probe_record(int64_t step, double loss, const ProbeStats& s);
/// The field names of a record, in order.
const std::vector<std::string>& probe_fields();

struct ProbeRun {
  std::string norm;
  std::vector<nlohmann::json> records;  ///< one per step, as written to <out>/<norm>.jsonl
  std::filesystem::path jsonl, svg;
};

/// Trains one fresh model per variant for cfg.steps updates (same seed, same batches) and writes the
/// files above. Stops a variant early (keeping its records) if the loss becomes non-finite.
/// Throws std::invalid_argument on an unknown norm, steps/batch_size < 1 or lr <= 0, std::runtime_error on
/// I/O failure.
std::vector<ProbeRun> run_grad_probe(const ProbeConfig& cfg, const nl::MnistLikeSplits& data);

/// A markdown table: per variant, averages over the run of |mean g|, |mean dL/dx|, |gbar|/sigma,
/// var g, var dL/dx, D_g/sigma^2 and sigma of x.
std::string format_probe_summary(const std::vector<ProbeRun>& runs);

}  // namespace nlapp
