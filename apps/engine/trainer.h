#pragma once
// Trainer: the one training loop of every task (fairseq's train.py in one class).
//   optimizer (adam | adamw | sgd) and lr schedule (fixed | inverse_sqrt | linear | cosine),
//   --update-freq micro-batches per update, --clip-norm, validation every --validate-interval epochs
//   and/or --validate-interval-updates, checkpoints (checkpoint_last, checkpoint_best,
//   checkpoint_{epoch}_{update} every --save-interval-updates, --keep-last N; all .safetensors,
//   written atomically), --resume (model, optimizer, update count, position inside the epoch, the
//   global RNG state, the best record, the metrics log) so an interrupted run continues
//   bit-identically, a progress line, metrics.jsonl and results.json.
// --distributed (data parallel over the ranks of mpirun; docs/distributed.md): rank 0's parameters are
//   broadcast at start; update u takes the next W·update_freq batches of the epoch (W ranks), rank r
//   the ones at offsets r, r + W, ...; gradients are summed in one flat all-reduce and divided by the
//   update's items over all ranks, so W ranks x batch B step exactly as one process x batch W·B; float
//   buffers (running statistics) follow rank 0 after each update unless --sync-batch-stats pools them;
//   validation is split over the ranks (Task::evaluate_shard) and reduced; rank 0 alone logs and
//   writes files; a rank that fails aborts every rank (and a rank waiting more than --dist-timeout
//   seconds for the others aborts the job), and --resume continues with any number of ranks.
// A non-finite training loss stops the run with TrainingDiverged naming the update.
// The --out folder is the run's while it runs (engine/run_folder.h): another normlab process writing there
//   is refused with this one's pid, a new run (no --resume) into a folder that holds another run's records
//   is refused unless --overwrite, leftover checkpoint temporaries are removed at start, and a resume never
//   replaces sound results.json values with NaN or empty ones.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/options.h"
#include "engine/task.h"
#include "engine/trainer_settings.h"
#include "distributed/process_group.h"
#include "optim/optimizer.h"
#include "optim/schedule.h"
#include "report/metrics_log.h"
#include "report/progress.h"

namespace nlapp {


/// The full schema of `task`: the trainer's settings with the task's defaults applied, then the
/// task's own settings.
OptionSchema task_schema(const Task& task);

/// Thrown when the training loss becomes NaN or infinite; what() names the update and the fix.
struct TrainingDiverged : std::runtime_error {
  TrainingDiverged(const std::string& what, int64_t update) : std::runtime_error(what), update(update) {}
  int64_t update;
};

/// Callbacks for probes and tools that watch training without changing it.
struct TrainerHooks {
  /// After backward and before the optimizer step of each update: (update number from 1, loss). Setting
  /// it makes every update read its loss from the device (a probe's cost, not a training run's).
  std::function<void(int64_t, double)> after_backward;
  /// After the optimizer step of each update: (update number from 1). With --distributed, the
  /// parameters are then identical on every rank.
  std::function<void(int64_t)> after_step;
};

/// What a finished run reports (also written to <out>/results.json).
struct RunResult {
  nlohmann::json settings;
  int64_t updates = 0;
  double epochs = 0;                 ///< epochs done, as a fraction
  double best_valid = 0;             ///< best validation value of info().metric
  double best_epoch = 0;             ///< fractional epoch of that validation
  Metrics test;                      ///< test metrics of the best-validation weights
  double train_seconds = 0;          ///< wall time of training less the time stopped (ActiveClock), summed over every process that resumed the run
  double items_per_s = 0;
  std::vector<std::pair<int64_t, double>> train_loss;   ///< (update, mean loss since the last point)
  std::vector<std::pair<double, double>> valid_curve;   ///< (epoch, validation metric)
  nlohmann::json to_json() const;
};

/// Trains `task` (already set up) with resolved `settings` (task_schema(task).resolve(...)).
class Trainer {
 public:
  /// Builds the model (after seeding the global generator with settings["seed"]), moves it to
  /// settings["device"] (engine/run_device.h; cpu when absent), then builds the optimizer and the
  /// schedule. Throws std::invalid_argument on inconsistent settings (e.g. a linear schedule
  /// without --max-update) or a device that does not exist.
  Trainer(Task& task, nlohmann::json settings, TrainerHooks hooks = {});
  /// Removes the --sync-batch-stats hook it installed.
  ~Trainer();

  /// Runs (or resumes, with settings["resume"]) to the end of training, then evaluates the
  /// best-validation weights on the test split. Throws TrainingDiverged on a non-finite loss,
  /// std::runtime_error on I/O problems or a resume whose settings differ (naming them).
  RunResult run();

  /// One update on the given micro-batches without logging or checkpointing: zero_grad, forward and
  /// backward of each (the loss scaled by 1/k for k micro-batches), the after_backward hook, clipping,
  /// the schedule's lr for update `update_index` (0-based) and the optimizer step. Returns the mean loss
  /// as a 0-d float64 tensor on device(), not read: the step never waits for the host (the after_backward
  /// hook, when set, reads it). A non-finite loss is not detected here; run() reads the losses once per
  /// log interval and before validating or saving, and stops there. What `normlab bench` times.
  /// The batches must be on device() already (to_device); run() moves the ones it draws.
  nl::Tensor update(const std::vector<const TaskBatch*>& micro_batches, int64_t update_index);

  /// This process's rank and the number of ranks (0 and 1 without --distributed).
  int rank() const;
  int world_size() const;

  nl::Module& model() { return *model_; }
  /// Where the model, the optimizer state and the training batches live (settings["device"]).
  nl::Device device() const { return device_; }
  const nlohmann::json& settings() const { return settings_; }

 private:
  struct State;
  nl::Tensor update_distributed(const std::vector<const TaskBatch*>& micro_batches, int64_t update_index);
  /// The tail every update shares once its gradients are final: the after_backward hook, clipping, the
  /// schedule's lr, the optimizer step, the buffer broadcast of data parallelism and the after_step hook.
  void finish_update(const nl::Tensor& mean_loss, int64_t update_index);
  RunResult run_loop();  ///< run() without the abort-every-rank guard
  /// task_.evaluate, or with --distributed each rank's shard reduced over the ranks.
  Metrics evaluate(const std::string& split);
  bool root() const { return pg_ == nullptr || pg_->rank() == 0; }
  void save_last(const State& st, bool interval_copy);
  void save_best(const State& st, double epoch_pos);
  /// Model-only checkpoint{epoch}.safetensors (1-based epoch just finished; for averaging and generation).
  void save_epoch(int64_t epoch, int64_t updates);
  bool try_resume(State& st);
  /// When `r` has no sound results (best validation or a test metric non-finite, or no test) but
  /// OUT/results.json has, copies those into `r`, warns and returns true: a resume never replaces sound
  /// results with NaN or empty ones.
  bool keep_sound_results(RunResult& r);
  void validate(State& st, double epoch_pos);
  void write_metrics(const nlohmann::json& record);  ///< one metrics.jsonl line, counted
  std::filesystem::path out() const;

  Task& task_;
  nlohmann::json settings_;
  TrainerHooks hooks_;
  nl::Device device_;
  std::shared_ptr<nl::Module> model_;
  std::unique_ptr<nl::Optimizer> opt_;
  std::unique_ptr<nl::Schedule> sched_;
  std::vector<nl::Variable> params_;
  nl::StateDict best_;  ///< best-validation weights (clones)
  std::unique_ptr<MetricsLog> log_;
  int64_t metrics_lines_ = 0;  ///< lines in metrics.jsonl (what a checkpoint records for a resume)
  std::ostringstream quiet_sink_;  ///< where a --quiet run's progress goes (outlives progress_)
  std::unique_ptr<ProgressPrinter> progress_;
  nl::dist::ProcessGroup* pg_ = nullptr;  ///< the ranks of a --distributed run (null otherwise)
  bool bf16_ = false;                     ///< --bf16: forward and loss under a bfloat16 AutocastGuard
  bool sync_stats_ = false;               ///< this trainer installed the --sync-batch-stats hook
  bool float_buffers_ = false;            ///< the model has float buffers (running statistics)
  int64_t last_items_ = 0;                ///< items of the last update over all ranks (--distributed)
};

}  // namespace nlapp
