#pragma once
// What the training probes (grad_probe, batch_stats_probe) share: picking the watched module, the
// settings of a short probe run, and plot series from JSON-lines records.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nn/module.h"
#include "report/plot_svg.h"

namespace nlapp {

/// The module of `model` named `name` (dotted), or with `name` empty the first one (in named_modules
/// order) for which `fallback` holds. `probe` names the command and `fallback_what` the fallback in the
/// error. Throws std::invalid_argument listing the available names when none matches.
nl::Module& find_probe_layer(nl::Module& model, const std::string& name,
                             const std::function<bool(const std::string&, const nl::Module&)>& fallback,
                             const std::string& probe, const std::string& fallback_what);

/// `settings` for a probe run of `steps` updates with norm `norm`: no checkpoints, no validation,
/// no final test pass (`no_test`), quiet, outputs under `out`/runs/<norm>.
nlohmann::json probe_run_settings(nlohmann::json settings, const std::string& norm, int64_t steps,
                                  const std::filesystem::path& out);

/// The curve of record field `field` against "step" (non-numbers, e.g. null, become NaN gaps).
Series series_of(const std::vector<nlohmann::json>& records, const std::string& field, const std::string& name);

/// The mean of record field `field` over the records whose value is a number; NaN when none is.
double field_mean(const std::vector<nlohmann::json>& records, const std::string& field);

}  // namespace nlapp
