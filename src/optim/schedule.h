#pragma once
// Learning-rate schedules: small immutable objects mapping an update count to a learning rate.
//
// Step convention (fairseq's num_updates): lr(step) is the learning rate for the update that follows
// `step` completed updates, so the first update uses lr(0). A training loop does
//   opt.set_lr(sched->lr(num_updates)); opt.step(); ++num_updates;
// Schedules hold no mutable state: resuming needs only their JSON config and the step count.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nl {

class Schedule {
 public:
  virtual ~Schedule() = default;
  /// Learning rate for the update after `step` (≥ 0) completed updates; throws std::invalid_argument
  /// for a negative step.
  virtual double lr(int64_t step) const = 0;
  /// "constant", "inverse_sqrt", "linear", "cosine" or "step".
  virtual std::string name() const = 0;
  /// Full config including {"name": name()}; make_schedule(j["name"], j) rebuilds an equal schedule.
  virtual nlohmann::json to_json() const = 0;
};

/// lr(step) = lr.  Config: {"lr"}.
class ConstantSchedule : public Schedule {
 public:
  explicit ConstantSchedule(double lr);
  double lr(int64_t step) const override;
  std::string name() const override { return "constant"; }
  nlohmann::json to_json() const override;

 private:
  double lr_;
};

/// fairseq's inverse_sqrt (fairseq/optim/lr_scheduler/inverse_square_root_schedule.py):
///   step < warmup_updates:  warmup_init_lr + step · (lr − warmup_init_lr) / warmup_updates
///   otherwise:              decay_factor / √step, with decay_factor = lr · √warmup_updates
/// so lr(warmup_updates) = lr exactly. Config: {"lr", "warmup_updates" (≥ 1, default 4000),
/// "warmup_init_lr" (≤ lr, default 0; fairseq's default when warmup_updates > 0)}.
class InverseSqrtSchedule : public Schedule {
 public:
  /// Throws std::invalid_argument on a negative or non-finite lr or warmup_init_lr, warmup_init_lr > lr
  /// (the message names --warmup-init-lr and --lr) or warmup_updates < 1.
  InverseSqrtSchedule(double lr, int64_t warmup_updates, double warmup_init_lr = 0.0);
  double lr(int64_t step) const override;
  std::string name() const override { return "inverse_sqrt"; }
  nlohmann::json to_json() const override;

 private:
  double lr_, warmup_init_lr_;
  int64_t warmup_;
};

/// Linear warmup then linear decay to 0 at total_steps (as transformers'
/// get_linear_schedule_with_warmup, plus an optional warmup start):
///   step < warmup_steps: warmup_init_lr + (lr − warmup_init_lr) · step / warmup_steps
///   otherwise:           lr · max(0, (total_steps − step) / (total_steps − warmup_steps))
/// Config: {"lr", "total_steps" (> warmup_steps), "warmup_steps" (default 0), "warmup_init_lr" (≤ lr, default 0)}.
class LinearSchedule : public Schedule {
 public:
  /// Throws std::invalid_argument on a negative or non-finite lr or warmup_init_lr, warmup_init_lr > lr
  /// (naming --warmup-init-lr and --lr), warmup_steps < 0 or total_steps <= warmup_steps.
  LinearSchedule(double lr, int64_t warmup_steps, int64_t total_steps, double warmup_init_lr = 0.0);
  double lr(int64_t step) const override;
  std::string name() const override { return "linear"; }
  nlohmann::json to_json() const override;

 private:
  double lr_, warmup_init_lr_;
  int64_t warmup_, total_;
};

/// Linear warmup then cosine decay from lr to min_lr over [warmup_steps, total_steps], constant
/// min_lr afterwards (transformers' get_cosine_schedule_with_warmup with a floor):
///   step < warmup_steps: warmup_init_lr + (lr − warmup_init_lr) · step / warmup_steps
///   otherwise: p = min(1, (step − warmup_steps) / (total_steps − warmup_steps)),
///              min_lr + (lr − min_lr) · ½ (1 + cos(π p))
/// Config: {"lr", "total_steps" (> warmup_steps), "warmup_steps" (default 0), "min_lr" (≤ lr, default 0),
/// "warmup_init_lr" (≤ lr, default 0)}.
class CosineSchedule : public Schedule {
 public:
  /// Throws std::invalid_argument on a negative or non-finite lr, min_lr or warmup_init_lr, min_lr > lr
  /// or warmup_init_lr > lr (naming --min-lr / --warmup-init-lr and --lr), warmup_steps < 0 or
  /// total_steps <= warmup_steps.
  CosineSchedule(double lr, int64_t warmup_steps, int64_t total_steps, double min_lr = 0.0,
                 double warmup_init_lr = 0.0);
  double lr(int64_t step) const override;
  std::string name() const override { return "cosine"; }
  nlohmann::json to_json() const override;

 private:
  double lr_, min_lr_, warmup_init_lr_;
  int64_t warmup_, total_;
};

/// Step decay (PyTorch's StepLR counted in updates; Ni et al. 2024 §5.1 of the notes: "lr halved every
/// 20 epochs" is step_size = 20 · updates per epoch, gamma = 0.5):
///   lr(step) = lr · gamma^floor(step / step_size)
/// Config: {"lr", "step_size" (updates, ≥ 1), "gamma" (> 0, default 0.1 as PyTorch)}.
class StepSchedule : public Schedule {
 public:
  StepSchedule(double lr, int64_t step_size, double gamma = 0.1);
  double lr(int64_t step) const override;
  std::string name() const override { return "step"; }
  nlohmann::json to_json() const override;

 private:
  double lr_, gamma_;
  int64_t step_size_;
};

/// Builds a schedule by name ("constant", "inverse_sqrt", "linear", "cosine", "step") from its JSON config
/// (keys as documented on each class; a "name" key is allowed and must agree). Throws
/// std::invalid_argument for an unknown name (listing the known ones), a missing required key, an
/// unknown key (listing the accepted ones), a value of the wrong type or an invalid value.
std::unique_ptr<Schedule> make_schedule(const std::string& name, const nlohmann::json& config);
/// make_schedule(config["name"], config): the inverse of Schedule::to_json.
std::unique_ptr<Schedule> schedule_from_json(const nlohmann::json& config);
/// Names accepted by make_schedule.
std::vector<std::string> schedule_names();

}  // namespace nl
