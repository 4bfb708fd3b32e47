#pragma once
// The one experiment runner of every `normlab reproduce ...` command: a list of runs (task name,
// config, settings overrides, label), each trained by the one Trainer in its own folder
// <out>/runs/<label>/ (config.json, metrics.jsonl, checkpoints, results.json).
//   - A run with a registry key (engine/registry.h) whose record in the registry has the same settings is
//     not redone: the committed results serve, and a finished run's record is written there (never over
//     a record of other settings: that is reported and left alone).
//   - A run whose results.json exists with the same settings is not redone (loaded instead); one
//     interrupted mid-way continues from its checkpoint_last (every run is started with --resume),
//     and one whose run length (--max-update / --max-epoch) was raised trains on from where it stopped.
//   - A run that diverges (TrainingDiverged) is recorded as such in its results.json and not redone.
//   - A run that fails otherwise (an error of its task or the Trainer, e.g. settings its model rejects or
//     a resume whose settings differ) is recorded as "failed" with the error, the others go on, and it is
//     tried again next time (failed_runs_error() turns the failures into one error for the command).
//   - A run naming a task this binary does not have is an error before any run starts.
//   - Before the first run every distinct (task, data) pair is set up once, so a missing data set is a
//     clear error at the start instead of after hours of training.
//   - An overall progress line per run (run i of N, elapsed, ETA from the runs trained so far), and a
//     callback after every run so the command rewrites its tables.
//   - Under `mpirun ... --distributed` every rank trains every run together; a data-parallel run is another
//     experiment (its global batch is the ranks' sum), so its registry column gets "+ddp<W>" (W ranks), and
//     only rank 0 logs, records and reports: the other ranks' records say so (`reports_here`).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/registry.h"
#include "engine/task.h"

namespace nlapp {

/// One run of an experiment.
struct ExperimentRun {
  std::string label;   ///< unique within the experiment; the folder <out>/runs/<label> ('/' makes sub-folders)
  std::string task;    ///< task registry name, e.g. "mt"
  std::string config;  ///< config name or path ("" = apps/configs/<task>/default.json or built-in defaults)
  nlohmann::json overrides = nlohmann::json::object();  ///< settings applied after the config (checked by the schema)
  nlohmann::json tags = nlohmann::json::object();       ///< free-form facts for the tables (column, variant, seed)
  std::optional<RegistryKey> registry = std::nullopt;  ///< where its record lives in the results registry (none: not registered)
};

/// Where a run stands (NotRun: unfinished, in a look-up-only experiment, ExperimentOptions::dry).
enum class RunStatus { Pending, Done, Diverged, Failed, NotRun };

/// "pending", "done", "diverged", "failed" or "not run".
std::string status_name(RunStatus s);

/// The outcome of one run.
struct RunRecord {
  ExperimentRun run;
  RunStatus status = RunStatus::Pending;
  /// Done: the run's results.json (RunResult::to_json() plus task, data, metric, ...). Diverged: its
  /// settings and error. Pending: empty.
  nlohmann::json result;
  std::string message;   ///< Diverged / Failed: why, in words
  bool reused = false;   ///< finished before this process started (loaded, not redone)
  bool from_registry = false;  ///< the result came from the registry record
  double seconds = 0;    ///< wall time of this process's training of the run (0 when reused)
  /// --distributed, rank > 0: rank 0 holds the result (empty here) and writes every output.
  bool other_rank = false;
  std::filesystem::path folder;

  /// result["test"][metric], or NaN when absent (pending, diverged, failed, metric not reported).
  double test_metric(const std::string& metric) const;
  /// result["data"] (the task's data_summary), or "".
  std::string data() const;
};

/// Makes a task by registry name; returns nullptr when no such task is registered.
using TaskFactory = std::function<std::unique_ptr<Task>(const std::string&)>;

/// Settings of an experiment.
struct ExperimentOptions {
  std::filesystem::path out = "results/experiment";
  /// Applied to every run after its overrides (e.g. {"max_update": 20, "max_epoch": 1} for a smoke run).
  nlohmann::json budget = nlohmann::json::object();
  /// Raw `--set KEY=VALUE` texts, applied last to every run whose task has setting KEY (parsed by that
  /// task's schema, e.g. {"beam": "1"} shortens the MT test decoding of a smoke run); a key that no
  /// registered task of the experiment has is an error.
  std::map<std::string, std::string> set;
  std::ostream* log = nullptr;  ///< progress lines (nullptr: std::cout)
  /// The results registry's root (engine/registry.h); empty: runs are neither looked up nor recorded there.
  std::filesystem::path registry = "results";
  /// Look up only (what `normlab report` does): finished runs come from the registry and the run folders;
  /// nothing is trained and no data is loaded; the others are NotRun.
  bool dry = false;
  /// Called after the existing results are loaded and after every run, with all records so far
  /// (what the command uses to rewrite its tables).
  std::function<void(const std::vector<RunRecord>&)> on_update;
  /// Task lookup; default: the task registry (registry_task_factory()).
  TaskFactory make_task;
};

/// The task registry as a TaskFactory (nullptr for an unregistered name).
TaskFactory registry_task_factory();

/// The resolved settings of `run` for `task`: defaults ← config ← run.overrides ← opt.budget ← the
/// opt.set keys the task has, then "out" = the run's folder and "resume" = true. Throws std::invalid_argument naming the run's label
/// and the bad setting (unknown key, wrong type, out of range), std::runtime_error for a missing config.
nlohmann::json experiment_settings(const Task& task, const ExperimentRun& run, const ExperimentOptions& opt);

/// The settings of two runs are the same experiment: equal on every key except those that only
/// change where and how a run prints or resumes (out, resume, overwrite, quiet, threads, detect_anomaly, device);
/// "data" is compared by its last path component (the corpus: data-bin/multi30k and /copy/multi30k/ are one
/// experiment, the record's "data" summary names what it held).
/// With `defaults` (a schema's defaults), a key that only one side has counts as equal when its value is
/// the default (a record written before that setting existed ran with what the default now does).
bool same_experiment(const nlohmann::json& a, const nlohmann::json& b,
                     const nlohmann::json& defaults = nlohmann::json::object());

/// Runs every run in order as the file comment describes and returns their records (same order).
/// Throws std::invalid_argument on duplicate labels, bad overrides, an unknown --set key or one the experiment
/// sets per run (seed, out, a key of a run's overrides), std::runtime_error from a task's setup (a missing data
/// set, naming the run and the fix), all before any training.
std::vector<RunRecord> run_experiment(const std::vector<ExperimentRun>& runs, const ExperimentOptions& opt);

/// Gives each column of `runs` (the runs sharing a "column" tag) the precision its finished runs already have in
/// `lookup`'s registry, so a column is resumed, completed and reported in one precision (issue 28: the MT
/// column in bfloat16, the others in float32): a column with more runs finished in bfloat16 than in float32
/// gets {"bf16": true} in every run's overrides; float32 on a tie or when none is finished. Looks up only
/// (lookup.dry is forced; nothing is trained). For `reproduce` without --bf16 and for `report`.
void keep_column_precision(std::vector<ExperimentRun>& runs, ExperimentOptions lookup);

/// "+ddp<W>" for settings with "distributed": true (W: the ranks mpirun started, nl::dist::world()), else "":
/// the registry column and working folder suffix of a data-parallel run. Throws std::runtime_error when this
/// binary was built without MPI (naming the fix).
std::string data_parallel_suffix(const nlohmann::json& settings);

/// False on the ranks > 0 of a --distributed experiment (their records are `other_rank`): such a rank has
/// trained its share and writes nothing; it throws failed_runs_error() when a run failed here too, so the job's
/// exit status says so. True otherwise (every process without --distributed).
bool reports_here(const std::vector<RunRecord>& records);

/// "" when no record failed; otherwise one message naming every failed run and its error (what a
/// command throws after writing its tables, so that it exits with an error).
std::string failed_runs_error(const std::vector<RunRecord>& records);

/// The records as a JSON array for a command's results.json: each run's result (or {}) with its label,
/// tags, status name and message.
nlohmann::json records_json(const std::vector<RunRecord>& records);

}  // namespace nlapp
