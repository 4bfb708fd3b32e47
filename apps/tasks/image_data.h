#pragma once
// The data side of the image tasks on MNIST and CIFAR-10 (lnnet, and later resnet-cifar): shared
// settings (--dataset, --data, --batches, --valid-size, --split-seed, --train-subset, --test-subset, --random-labels,
// --grayscale), loading with per-channel normalisation from the train split, the record of what was
// loaded (written to <out>/data.json: batches, the validation indices, the statistics, the random
// labels), and accuracy evaluation.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/image_dataset.h"
#include "engine/options.h"
#include "engine/task.h"

namespace nlapp {

/// One mini-batch of images [B, C, H, W] and labels [B].
struct ImageBatch : TaskBatch {
  nl::Tensor images, labels;
  std::vector<nl::Tensor*> tensors() override { return {&images, &labels}; }
};

/// Specs of the shared data settings (see the file comment); `default_dataset` is "mnist" or "cifar10".
std::vector<OptionSpec> image_data_settings(const std::string& default_dataset);

/// Loaded splits plus their description.
struct ImageData {
  nl::ImageDataset train, valid, test;
  std::string summary;   ///< one line for the run header and results, e.g. "cifar10 batches 1 (train 2000 of 9000 ...)"
  nlohmann::json record; ///< what <out>/data.json holds
  int64_t features() const { return train.images.numel() / std::max<int64_t>(1, train.size()); }
};

/// Loads the data the settings ask for:
///   mnist:   load_mnist_like(data), valid = the last valid_size images of the training file;
///   cifar10: load_cifar10(data) of the chosen batches, valid = valid_size images drawn with split_seed;
/// then train_subset (the first N train images; 0 = all), test_subset (the first N test images), grayscale (CIFAR-10), per-channel
/// normalisation with the train split's mean/std, and with random_labels >= 0 every split's labels
/// permuted once with that seed (permute_labels streams 0, 1, 2 for train, valid, test).
/// `data` "" means ../shared/data/<dataset>. Throws std::runtime_error / std::invalid_argument naming
/// a missing folder or a bad option and the fix.
ImageData load_image_data(const nlohmann::json& settings);

/// Writes data.record to <out>/data.json (atomically, creating <out>).
void write_image_data_record(const ImageData& data, const std::filesystem::path& out);

/// {"acc": accuracy in %, "loss": mean cross-entropy} of `model` (logits [B, classes] from images) on
/// `d`, in eval mode without gradients, in batches of 1000; the model's training mode is restored.
Metrics image_accuracy(nl::Module& model, const nl::ImageDataset& d);
/// image_accuracy over `shard`'s share of d (its batches of 1000 with index % world == rank); `count`
/// receives the number of images scored (what Task::evaluate_shard weighs the means by).
Metrics image_accuracy(nl::Module& model, const nl::ImageDataset& d, EvalShard shard, double& count);

}  // namespace nlapp
