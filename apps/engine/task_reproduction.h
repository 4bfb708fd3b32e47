#pragma once
// A task's own reproduction (`normlab reproduce <task>`, and the task tables of `normlab report`): every
// norm variant × seeds of one task's settings as experiment runs registered under
// <registry>/<task>/<column>/<variant>/seed<N>.json, and the table, curves and results.json built from
// their records.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/experiment.h"
#include "engine/task_cli.h"

namespace nlapp {

/// What a task reproduction runs.
struct TaskReproduction {
  int seeds = 3;
  std::vector<std::string> variants;  ///< empty: the LayerNorm family of Xu et al. that the task's --norm takes
};

/// The variants to run: `asked` checked against the task's --norm choices (canonical names: "ln-g" ->
/// "lng"), or the LayerNorm family the task offers when empty. Throws std::invalid_argument for a norm
/// the task lacks, or lng / groupnorm with --groups 1 (that is layernorm itself).
std::vector<std::string> checked_variants(const Task& task, const nlohmann::json& settings,
                                          const std::vector<std::string>& asked);

/// The registry column of `inv`: the config's name ("one-epoch"; "builtin" without a config file), plus
/// "@<folder>" when the data folder is not the config's own (e.g. "one-epoch@mnist"), plus "+bf16" with
/// --bf16 and "+tf32" with --tf32 (another precision is another column: "one-epoch+bf16"), plus "+ddp<W>"
/// with --distributed over W ranks (data_parallel_suffix).
std::string registry_column(const TaskInvocation& inv);

/// The runs: seeds 1..N × variants (resolved), labelled "<variant>-seed<n>", tagged {variant, seed},
/// registered as <task>/<registry_column(inv)>/<variant>/seed<n>.
std::vector<ExperimentRun> task_reproduction_runs(const TaskInvocation& inv, const TaskReproduction& r);

/// The results table (markdown): per variant the test metric and best validation (mean ± std over the
/// finished seeds), the paper's columns, diverged seeds and speed; with a header paragraph naming the data,
/// the settings and the config by name (no machine-specific paths, so that the docs can embed it).
std::string format_task_reproduction(const TaskInvocation& inv, const TaskReproduction& r,
                                     const std::vector<RunRecord>& records);

/// results.md (format_task_reproduction), the curves train_loss.svg and valid_<metric>.svg (seed 1) and,
/// `with_json`, results.json (every finished run's result) into `out`.
void write_task_reproduction(const TaskInvocation& inv, const TaskReproduction& r, const std::filesystem::path& out,
                             const std::vector<RunRecord>& records, bool with_json = true);

}  // namespace nlapp
