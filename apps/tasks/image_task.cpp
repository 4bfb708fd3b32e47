#include "tasks/image_task.h"

#include <stdexcept>

#include "autograd/functions.h"
#include "data/image_ops.h"

namespace nlapp {
using json = nlohmann::json;

ImageTask::ImageTask(std::string default_dataset, int64_t default_batch, bool augment_option)
    : default_dataset_(std::move(default_dataset)), default_batch_(default_batch), augment_option_(augment_option) {}

std::vector<OptionSpec> ImageTask::settings() const {
  std::vector<OptionSpec> v = image_data_settings(default_dataset_);
  v.push_back(option("batch_size", OptKind::Int, default_batch_, "Images per batch", 1, 1e6));
  if (augment_option_)
    v.push_back(option("augment", OptKind::Bool, true,
                       "Random crop (4-pixel zero padding) + left-right flip of training batches (He et al. 2016 §4.2)"));
  for (auto& o : model_settings()) v.push_back(o);
  return v;
}

int64_t ImageTask::epoch_size(uint64_t) const {
  if (!train_)
    throw std::logic_error("ImageTask::epoch_size: no data loaded; call setup() with the settings first");
  return train_->num_batches();
}

void ImageTask::setup(const json& s) {
  json key = json::object();
  for (const auto& o : image_data_settings(default_dataset_)) key[o.key] = s.at(o.key);
  if (key != loaded_key_) {  // a sweep sets up once per run: load the data once
    data_ = load_image_data(s);
    loaded_key_ = key;
  }
  write_image_data_record(data_, s.at("out").get<std::string>());
  seed_ = (uint64_t)s.at("seed").get<int64_t>();
  augment_ = augment_option_ && s.at("augment").get<bool>();
  train_ = std::make_unique<nl::Batcher>(data_.train, s.at("batch_size").get<int64_t>(), seed_);
}

std::unique_ptr<TaskBatch> ImageTask::train_batch(uint64_t epoch, int64_t index) const {
  if (train_->epoch() != epoch) train_->set_epoch(epoch);
  nl::Batch b = train_->batch(index);
  auto out = std::make_unique<ImageBatch>();
  out->images = augment_ ? nl::random_crop_flip(b.images, 4, seed_, epoch, index) : b.images;
  out->labels = b.labels;
  out->items = b.labels.numel();
  return out;
}

nl::Variable ImageTask::loss(nl::Module& model, const TaskBatch& b) const {
  const auto& ib = static_cast<const ImageBatch&>(b);
  return nl::cross_entropy(model(nl::Variable(ib.images)), ib.labels);
}

Metrics ImageTask::evaluate(nl::Module& model, const std::string& split) const {
  if (split == "test") return image_accuracy(model, data_.test);
  Metrics m = data_.valid.size() ? image_accuracy(model, data_.valid) : Metrics{};
  const Metrics t = image_accuracy(model, data_.train);
  m["train_acc"] = t.at("acc");
  m["train_loss"] = t.at("loss");
  return m;
}

Metrics ImageTask::final_test(nl::Module& model, const nl::StateDict& best, const json&) {
  model.load_state_dict(best);
  Metrics m = evaluate(model, "valid");
  m["test_acc"] = image_accuracy(model, data_.test).at("acc");
  return m;
}

std::unique_ptr<TaskBatch> ImageTask::bench_batch(const json& s) const {
  const int64_t bs = s.at("batch_size").get<int64_t>();
  const bool cifar = s.at("dataset").get<std::string>() == "cifar10";
  const int64_t c = cifar ? (s.at("grayscale").get<bool>() ? 1 : 3) : 1, hw = cifar ? 32 : 28;
  auto out = std::make_unique<ImageBatch>();
  out->images = nl::Tensor::rand({bs, c, hw, hw});
  std::vector<int64_t> lab(bs);
  for (int64_t i = 0; i < bs; ++i) lab[i] = i % 10;
  out->labels = nl::Tensor::from_vector(lab, {bs});
  out->items = bs;
  return out;
}

}  // namespace nlapp
