#pragma once
// `normlab grad probe <task>`: Theorem 1 live. Trains a task's model with the Trainer and records per
// update, at one norm layer (watched through a forward hook, Module::register_forward_hook), the
// statistics of the gradient arriving at the norm's output (g) and leaving it at its input (dL/dx),
// per row (one item, over the H features) and averaged over the rows. Writes <out>/<norm>.jsonl and
// <out>/<norm>.svg per variant and <out>/mean-dx.svg comparing mean(dL/dx) across variants.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/task.h"
#include "nn/module.h"
#include "tensor/tensor.h"

namespace nlapp {

struct ProbeConfig {
  std::vector<std::string> norms;  ///< names of nl::layernorm_family_names()
  int64_t steps = 300;             ///< training updates per variant (>= 1)
  std::string layer;               ///< dotted module name; "" = the first module whose name ends in "norm"
  std::filesystem::path out = "results/grad-probe";
  bool quiet = false;              ///< no progress lines
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

/// The module `run_grad_probe` watches in `model`: the one named `layer` (dotted), or with `layer` empty
/// the first whose name ends in "norm". Throws std::invalid_argument listing the module names when none
/// matches, or, when `layer` names a module that is not a norm layer (the last part of its name holds no
/// "norm", e.g. fc1), naming it, its type and the norm layers that can be probed.
nl::Module& find_grad_probe_layer(nl::Module& model, const std::string& layer);

/// Trains one fresh model per variant for cfg.steps updates with the task's `settings` (same seed,
/// same batches; settings["norm"] is replaced by each variant; no checkpoints) and writes the files
/// above. Stops a variant early (keeping its records) if the loss becomes non-finite. Throws
/// std::invalid_argument on an unknown norm or layer, a layer that is not a norm (find_grad_probe_layer),
/// steps < 1, a layer whose input is not [N, H];
/// std::runtime_error on I/O failure.
std::vector<ProbeRun> run_grad_probe(Task& task, const nlohmann::json& settings, const ProbeConfig& cfg);

/// A markdown table: per variant, averages over the run of |mean g|, |mean dL/dx|, |gbar|/sigma,
/// var g, var dL/dx, D_g/sigma^2 and sigma of x.
std::string format_probe_summary(const std::vector<ProbeRun>& runs);

}  // namespace nlapp
