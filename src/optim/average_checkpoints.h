#pragma once
// Checkpoint averaging as fairseq's scripts/average_checkpoints.py: pick the newest N epoch checkpoints
// (checkpoint{epoch}.safetensors) or interval checkpoints (checkpoint_{epoch}_{update}.safetensors) of a run,
// average their model weights element-wise and write a model checkpoint (docs/checkpoint-format.md,
// "Averaging checkpoints"). Differences from fairseq: sums are accumulated in float64 (fairseq sums in the
// tensor's dtype). int64 tensors (BatchNorm's num_batches_tracked, PowerNorm's iteration counter) are
// floor-averaged as fairseq does (`sum // N`), so runs whose norms count their updates can be averaged.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optim/checkpoint.h"

namespace nl {

/// Streaming element-wise mean of tensor maps: add() one map at a time (only the float64 sums are kept,
/// so N checkpoints never need to be in memory together), result() divides by the count.
class TensorAverager {
 public:
  /// Adds `m`; `source` names it in errors (a file name). The first map fixes the keys, dtypes and
  /// shapes. Throws std::invalid_argument naming the tensor and both sources when a key is missing or
  /// extra, or when a dtype or shape differs; and naming the tensor and `source` when a float tensor
  /// holds a NaN or an infinity (its average would too).
  void add(const TensorMap& m, const std::string& source);
  /// The mean of the maps added so far: float tensors as sum / count in their own dtype, int64 tensors
  /// as floor(sum / count) (fairseq's `//`). Throws std::logic_error when nothing was added.
  TensorMap result() const;
  /// How many maps were added.
  std::size_t count() const { return count_; }

 private:
  struct Entry {
    DType dtype;
    Shape shape;
    std::vector<double> sum;     // float tensors
    std::vector<int64_t> ints;   // int64 tensors
  };
  std::map<std::string, Entry> entries_;
  std::string first_source_;
  std::size_t count_ = 0;
};

/// Element-wise mean of tensor maps (TensorAverager over `maps`, named "map 0", "map 1", ...).
/// Throws std::invalid_argument for an empty list and what TensorAverager::add throws.
TensorMap average_tensor_maps(const std::vector<TensorMap>& maps);

/// Loads each checkpoint in turn and averages its tensors whose name starts with `prefix` (default
/// "model.": the weights; optimizer state is dropped). Throws what load_checkpoint throws (the message
/// names the file), what TensorAverager::add throws (naming both files), and std::invalid_argument for an
/// empty list or a checkpoint without any tensor under `prefix`.
TensorMap average_checkpoints(const std::vector<std::filesystem::path>& paths, const std::string& prefix = "model.");

/// Which checkpoints of a run directory last_n_checkpoints picks from.
enum class CheckpointSeries {
  kEpoch,  ///< checkpoint{epoch}.safetensors, ordered by epoch (checkpoint10 is newer than checkpoint9)
  kUpdate  ///< checkpoint_{epoch}_{update}.safetensors, ordered by update
};

/// The newest `n` checkpoints of `series` in directory `dir`, newest first (fairseq's last_n_checkpoints).
/// `upper_bound` >= 0 ignores checkpoints whose epoch (kEpoch) or update (kUpdate) number is above it.
/// Throws std::invalid_argument for n < 1, std::runtime_error when `dir` is not a directory or fewer than
/// `n` checkpoints match (naming how many and which were found).
std::vector<std::filesystem::path> last_n_checkpoints(const std::filesystem::path& dir, int64_t n,
                                                      CheckpointSeries series, int64_t upper_bound = -1);

/// An averaged model, ready for save_checkpoint.
struct AveragedModel {
  TensorMap tensors;    ///< the averaged `model.*` tensors
  nlohmann::json meta;  ///< {"format": "normlab-model-v2", "task", "settings", "averaged_from": [file names]}
};

/// Averages the `model.*` tensors of `inputs` (as average_checkpoints, reading each file once) and builds
/// model-checkpoint metadata: "task" and "settings" from inputs[0] — list the newest first, as last_n_checkpoints does and as fairseq
/// takes the first input's settings — and "averaged_from", the inputs' file names in the given order.
/// Throws what average_checkpoints throws, and std::runtime_error when an input has no "task" in its
/// normlab metadata (not written by the trainer), inputs[0] has no "settings", or two inputs belong to
/// different tasks (naming both files).
AveragedModel average_model_checkpoints(const std::vector<std::filesystem::path>& inputs);

}  // namespace nl
