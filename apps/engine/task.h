#pragma once
// Task: what the one Trainer needs to know about an experiment of the papers — its settings, its
// model, the batches of its training split, the loss of a batch, how to evaluate a split, and the
// paper's reference numbers. Tasks register in the task registry (task_registry.h); the commands
// `train`, `reproduce`, `bench` and `grad probe` look them up by name and know nothing else of them.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "autograd/variable.h"
#include "engine/options.h"
#include "nn/module.h"

namespace nlapp {

/// One mini-batch, opaque to the trainer. `items` counts what the progress line reports per second
/// (images, target tokens).
struct TaskBatch {
  virtual ~TaskBatch() = default;
  int64_t items = 0;
  /// Every tensor the task's loss reads from this batch (undefined ones are skipped), so that
  /// to_device (engine/run_device.h) can move the batch to the model's device. A batch that lists
  /// none stays on the host: fine on the cpu, and on a GPU its loss stops with the ops' error
  /// "tensors on different devices (cuda:0 vs cpu)".
  virtual std::vector<nl::Tensor*> tensors() { return {}; }
};

/// Named metrics of an evaluation, e.g. {"acc": 87.4, "loss": 0.35}.
using Metrics = std::map<std::string, double>;

/// The share of a split that rank `rank` of `world` evaluates when a data-parallel run validates.
struct EvalShard {
  int rank = 0;
  int world = 1;
};

/// Static facts about a task.
struct TaskInfo {
  std::string name;         ///< registry key, e.g. "mnist"
  std::string description;  ///< one line for --help
  std::string unit;         ///< what `items` counts: "img", "tok"
  std::string metric;       ///< the validation metric that picks checkpoint_best, e.g. "acc"
  bool higher_is_better = true;
  std::string paper;        ///< source of the reference numbers, e.g. "Xu et al. 2019, Tables 1-4"
  std::string test_metric = {};  ///< the metric reported on test when it differs from `metric` (MT: "bleu")
  std::string test_source = "the best-validation checkpoint";  ///< which weights are tested, for reports
  const std::string& reported_metric() const { return test_metric.empty() ? metric : test_metric; }
  int bench_steps = 300;  ///< default timed steps of `normlab bench` (warm-up: a tenth, at least 1)
};

/// How a metric of a split reads in messages and table heads: "valid acc", "test bleu"; a metric whose
/// name already names its split ("test_acc", "train_acc") reads "test acc", "train acc" (never
/// "test test_acc" or "valid train_acc").
inline std::string metric_label(const std::string& split, const std::string& metric) {
  for (const char* s : {"train_", "valid_", "test_"})
    if (metric.rfind(s, 0) == 0) return std::string(s).substr(0, std::string(s).size() - 1) + " " + metric.substr(std::string(s).size());
  return split + " " + metric;
}

/// An experiment. Lifecycle: settings() once; setup(settings) loads the data; then build_model and the
/// batch/loss/evaluate calls. All randomness comes from the settings' seed (see Trainer).
class Task {
 public:
  virtual ~Task() = default;
  virtual const TaskInfo& info() const = 0;
  /// The task's own settings (model, data, batch size, norm, ...) with defaults; the trainer adds its
  /// own (optimizer, schedule, run length, checkpoints).
  virtual std::vector<OptionSpec> settings() const = 0;
  /// Trainer defaults this task changes (e.g. {"lr": 1e-3, "max_epoch": 20}).
  virtual nlohmann::json trainer_defaults() const { return nlohmann::json::object(); }
  /// Loads data for the resolved settings. Throws std::runtime_error naming a missing data set and
  /// how to get it.
  virtual void setup(const nlohmann::json& settings) = 0;
  /// A one-line description of the loaded data (for the run header and results).
  virtual std::string data_summary() const = 0;
  /// Builds a freshly initialised model (draws from the global generator: seed it first).
  virtual std::shared_ptr<nl::Module> build_model(const nlohmann::json& settings) = 0;
  /// Number of training batches of epoch `epoch` (0-based).
  virtual int64_t epoch_size(uint64_t epoch) const = 0;
  /// Training batch `index` of epoch `epoch`: a pure function of (seed, epoch, index), so a run can
  /// resume in the middle of an epoch.
  virtual std::unique_ptr<TaskBatch> train_batch(uint64_t epoch, int64_t index) const = 0;
  /// The training loss of a batch (mean over its items), recorded on the tape.
  virtual nl::Variable loss(nl::Module& model, const TaskBatch& batch) const = 0;
  /// Evaluates `split` ("valid" or "test") in eval mode without gradients.
  virtual Metrics evaluate(nl::Module& model, const std::string& split) const = 0;
  /// evaluate() of `shard`'s share of `split` during data-parallel validation, as means over the
  /// `weight` items this rank scored: the trainer sums metric x weight and weight over the ranks and
  /// divides, so every metric must be a mean over items and the keys must not depend on the shard.
  /// Default: the whole split on every rank (weight 1): right for any metric, but no faster.
  virtual Metrics evaluate_shard(nl::Module& model, const std::string& split, EvalShard shard, double& weight) const {
    (void)shard;
    weight = 1;
    return evaluate(model, split);
  }
  /// The paper's number for these settings (same units as `info().metric`), or NaN if not reported.
  virtual double paper_reference(const nlohmann::json& settings) const = 0;
  /// The paper's numbers shown beside ours in `reproduce` tables, as (column title, value); NaN = not
  /// reported (e.g. diverged). Default: one "paper" column with paper_reference().
  virtual std::vector<std::pair<std::string, double>> paper_columns(const nlohmann::json& settings) const {
    return {{"paper", paper_reference(settings)}};
  }
  /// The final test metrics of a finished run whose folder is settings["out"]. Default: the
  /// best-validation weights `best` evaluated on "test". Tasks that score differently (MT: average the
  /// last epoch checkpoints, beam-search, BLEU) override it.
  virtual Metrics final_test(nl::Module& model, const nl::StateDict& best, const nlohmann::json& settings) {
    (void)settings;
    model.load_state_dict(best);
    return evaluate(model, "test");
  }
  /// The PyTorch twin of the bench step: a script under bench/ and its arguments (besides --json,
  /// --threads, --steps, --warmup), or an empty script when there is none for these settings.
  virtual std::pair<std::string, std::string> pytorch_bench(const nlohmann::json& settings) const {
    (void)settings;
    return {};
  }
  /// A synthetic batch of the size training uses, for `normlab bench` (no data needed; setup() is not
  /// called first, so build_model must work without data too).
  virtual std::unique_ptr<TaskBatch> bench_batch(const nlohmann::json& settings) const = 0;
};

}  // namespace nlapp
