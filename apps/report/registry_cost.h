#pragma once
// What the runs of the results registry cost: per registry column and device, how many finished runs it holds
// and their training and test minutes, from each record's own train_seconds / test_seconds. The planning
// numbers of docs/reproduce.md ("How long"), generated instead of typed.
#include <filesystem>
#include <string>

namespace nlapp {

/// A markdown table, one row per (group/column, device) of the run records under `root`
/// (`<root>/<group>/<column>/<variant>/seed<N>.json`; other files, e.g. bench/ and gpu/, are skipped):
/// finished runs, their training minutes per run (median, min–max), their test minutes per run (median),
/// and the machines they ran on (machine_label: the CPU model, the GPU model for a GPU run). "device" is the settings' device without its index
/// ("cpu", "cuda"). "no run records" when there is none. Throws std::runtime_error naming a record that is
/// not JSON or lacks "registry", "settings", "train_seconds" or "environment".
std::string format_registry_cost(const std::filesystem::path& root);

}  // namespace nlapp
