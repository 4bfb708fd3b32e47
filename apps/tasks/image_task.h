#pragma once
// ImageTask: what the image classification tasks on MNIST / CIFAR-10 share (lnnet, resnet-cifar) — the
// data settings of image_data.h plus --batch-size (and --augment when asked), loading once per data
// setting, <out>/data.json, seeded batches (random crop + flip with --augment), cross-entropy, and
// evaluation. Validation reports "acc" (the validation split) and "train_acc" / "train_loss" (the whole
// training split in eval mode); final_test adds "test_acc" for the chosen weights.
// A subclass gives info(), its model settings, build_model and trainer_defaults.
#include <memory>
#include <string>

#include "data/image_dataset.h"
#include "engine/task.h"
#include "tasks/image_data.h"

namespace nlapp {

/// Base of the image tasks (see the file comment).
class ImageTask : public Task {
 public:
  /// `augment_option`: whether the task offers --augment (random crop with 4-pixel padding + flip).
  ImageTask(std::string default_dataset, int64_t default_batch, bool augment_option);
  /// The data settings, --batch-size and (if offered) --augment, then model_settings().
  std::vector<OptionSpec> settings() const override;
  void setup(const nlohmann::json& settings) override;
  std::string data_summary() const override { return data_.summary; }
  /// Batches per epoch of the loaded training split. Throws std::logic_error before setup() (bench builds
  /// models without data, so it must not ask).
  int64_t epoch_size(uint64_t) const override;
  std::unique_ptr<TaskBatch> train_batch(uint64_t epoch, int64_t index) const override;
  nl::Variable loss(nl::Module& model, const TaskBatch& batch) const override;
  Metrics evaluate(nl::Module& model, const std::string& split) const override;
  Metrics final_test(nl::Module& model, const nl::StateDict& best, const nlohmann::json& settings) override;
  /// A batch of random images of the training size (MNIST 1×28×28 or CIFAR 3×32×32 per --dataset).
  std::unique_ptr<TaskBatch> bench_batch(const nlohmann::json& settings) const override;

 protected:
  /// The subclass's own settings (model shape, norm).
  virtual std::vector<OptionSpec> model_settings() const = 0;
  /// The loaded data (empty before setup: bench builds models without data).
  const ImageData& data() const { return data_; }

 private:
  std::string default_dataset_;
  int64_t default_batch_;
  bool augment_option_;
  bool augment_ = false;
  uint64_t seed_ = 0;
  ImageData data_;
  nlohmann::json loaded_key_;
  std::unique_ptr<nl::Batcher> train_;
};

}  // namespace nlapp
