#pragma once
// The MNIST/Fashion-MNIST experiment of Xu et al. 2019 (appendix A.3): train the CNN with one norm
// variant (Adam, batch 32), pick the checkpoint with the best validation accuracy, report its test
// accuracy. Writes progress, JSON-lines metrics and atomic, resumable checkpoints into `out`.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/image_dataset.h"
#include "nn/models/mnist_cnn.h"

namespace nlapp {

/// Default data folder: Fashion-MNIST from the Debian package dataset-fashion-mnist.
inline const char* kDefaultMnistData = "/usr/share/datasets/fashion-mnist";

struct MnistRunConfig {
  std::string norm = "layernorm";
  nlohmann::json norm_opts;      ///< extra make_norm options ({"impl": "composite"}, {"C": 2}, ...)
  int epochs = 20;
  int64_t batch_size = 32;
  double lr = 1e-3;
  uint64_t seed = 1;
  int64_t max_steps = -1;        ///< stop after this many updates in total (-1: no limit)
  int64_t eval_every = 0;        ///< validation every N updates (0: four times per epoch)
  int64_t save_every = 500;      ///< write last.safetensors every N updates (and at each evaluation)
  std::filesystem::path out;     ///< run folder (created); empty: write nothing
  bool resume = false;           ///< continue from out/last.safetensors when it exists
  bool quiet = false;            ///< no progress line
  std::string dataset_name = "fashion-mnist";
};

/// Where a run stands; also what a checkpoint stores.
struct MnistHistory {
  std::vector<std::pair<int64_t, double>> train_loss;   ///< (update, mean loss since last point)
  std::vector<std::pair<double, double>> valid_acc;     ///< (epoch as a fraction, accuracy %)
  nlohmann::json to_json() const;
  static MnistHistory from_json(const nlohmann::json& j);
};

struct MnistRunResult {
  std::string norm;
  uint64_t seed = 0;
  bool diverged = false;          ///< a non-finite loss stopped training
  std::string diverged_at;        ///< e.g. "update 312 (loss nan)"
  double best_valid_acc = 0;      ///< %
  double best_epoch = 0;          ///< fractional epoch of the best validation point
  double test_acc = 0;            ///< % of the best-validation checkpoint
  double test_loss = 0;
  int64_t updates = 0;
  double train_seconds = 0;
  double images_per_s = 0;
  MnistHistory history;
  nlohmann::json to_json() const;
};

/// Loads an MNIST-format folder (default: Fashion-MNIST) with the paper's 55k/5k/10k split and
/// returns it with a display name ("fashion-mnist", "mnist" or the folder name). Throws
/// std::runtime_error naming the folder and the expected files when something is missing.
nl::MnistLikeSplits load_mnist_data(const std::filesystem::path& dir, std::string* name);

/// The paper's MNIST accuracy (%) for a norm variant (Xu et al. 2019, Tables 1-4), or NaN if not reported.
double paper_mnist_accuracy(const std::string& norm);

/// Accuracy (%) and mean cross-entropy of `model` on `data` (eval mode, no grad; batches of 1000).
std::pair<double, double> evaluate(nl::MnistCnn& model, const nl::ImageDataset& data);

/// Trains one run. Throws std::runtime_error on bad configuration or I/O failure; a diverging run
/// (non-finite loss) is not an error: it returns with diverged = true and its history so far.
MnistRunResult run_mnist(const MnistRunConfig& cfg, const nl::MnistLikeSplits& data);

}  // namespace nlapp
