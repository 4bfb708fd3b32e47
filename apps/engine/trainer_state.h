#pragma once
// What the Trainer keeps of a run besides its tensors (Trainer::State: the position, the curves, the best
// value; stored in every checkpoint's metadata) and the checks a resumed or finished run's files pass:
// non-finite tensors, an impossible state, sound results on disk. Private to the Trainer (trainer.cpp).
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/trainer.h"
#include "optim/checkpoint.h"

namespace nlapp {

/// Where a run stands: everything a checkpoint stores besides the tensors.
struct Trainer::State {
  int64_t epoch = 0, next_batch = 0, updates = 0;
  double best = std::nan(""), best_epoch = 0;
  int64_t best_update = 0;
  double loss_acc = 0;
  int64_t loss_n = 0;
  bool finished = false;
  std::vector<std::pair<int64_t, double>> train_loss;
  std::vector<std::pair<double, double>> valid_curve;
  double last_valid_pos = -1;
  double train_seconds = 0;  ///< training time (ActiveClock) up to this state, summed over the processes that resumed it

  /// The checkpoint metadata entry "state".
  nlohmann::json to_json() const;
  /// Reads to_json()'s form; throws std::runtime_error naming `file` when a key is missing or mistyped.
  static State from_json(const nlohmann::json& j, const std::string& file);
  /// Throws std::runtime_error naming `file` when the state cannot come from a training run: negative counts,
  /// a batch beyond its epoch (`epoch_size` batches), a best update after the last one, a non-finite loss sum.
  void check_possible(int64_t epoch_size, const std::string& file) const;
};

/// The name of the first floating-point tensor of `tensors` holding a NaN or an infinity ("" if none). One
/// reduction per tensor on its device (0·x sums to NaN exactly when x has a non-finite element).
std::string first_non_finite_tensor(const nl::TensorMap& tensors);

/// results.json at `file` when it holds sound results: a best validation value and test metrics, all finite
/// numbers. Null otherwise (missing, not JSON, no test, a non-finite value).
nlohmann::json sound_results(const std::filesystem::path& file);

}  // namespace nlapp
