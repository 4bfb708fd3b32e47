#include "tasks/mnist.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "autograd/functions.h"
#include "data/image_dataset.h"
#include "engine/norm_settings.h"
#include "nn/models/mnist_cnn.h"
#include "report/paper_numbers.h"
#include "tasks/image_data.h"

namespace nlapp {
using json = nlohmann::json;

namespace {

struct ImageBatch : TaskBatch {
  nl::Tensor images, labels;
  std::vector<nl::Tensor*> tensors() override { return {&images, &labels}; }
};

class MnistTask : public Task {
 public:
  const TaskInfo& info() const override {
    static const TaskInfo i{"mnist", "Xu et al. 2019 MNIST CNN, appendix A.3", "img", "acc", true,
                            "Xu et al. 2019, Tables 1-4 (MNIST, 20 epochs)"};
    return i;
  }

  std::vector<OptionSpec> settings() const override {
    std::vector<OptionSpec> v = norm_settings("layernorm", 2.0);
    v.push_back(option("data", OptKind::String, kDefaultMnistData,
                       "MNIST-format folder (the four IDX files; default Fashion-MNIST from dataset-fashion-mnist)"));
    v.push_back(option("batch_size", OptKind::Int, 32, "Images per batch (paper: 32)", 1, 55000));
    v.push_back(option("hidden", OptKind::Int, 500, "Width of the normalised hidden layer (paper: 500)", 2, 65536));
    v.push_back(option("conv_relu", OptKind::Bool, true,
                       "ReLU after each convolution, as PyTorch's MNIST example network that appendix A.3 describes "
                       "(false: the network without them that normlab ran before 2026-11-26)"));
    return v;
  }

  json trainer_defaults() const override {
    // Validation at each quarter of an epoch (1719 updates at batch 32): the best-validation
    // checkpoint is chosen among four points per epoch.
    // No per-epoch checkpoint files: a reproduction trains 7 variants x seeds, and checkpoint_best and
    // checkpoint_last are what MNIST runs use.
    return {{"lr", 1e-3}, {"max_epoch", 20}, {"validate_interval_updates", 430}, {"save_interval", 0}};
  }

  void setup(const json& s) override {
    const std::string dir = s.at("data").get<std::string>();
    if (!std::filesystem::is_directory(dir))
      throw std::runtime_error("data folder '" + dir +
                               "' not found: install the Debian package dataset-fashion-mnist "
                               "(apt-get install dataset-fashion-mnist) or pass --data DIR with the four "
                               "MNIST-format IDX files (e.g. ../shared/data/mnist)");
    if (dir != loaded_dir_) {  // a sweep (reproduce, grad probe) sets up once per run: read the files once
      data_ = nl::load_mnist_like(dir);
      loaded_dir_ = dir;
    }
    std::string folder = std::filesystem::weakly_canonical(dir).filename().string();
    name_ = folder.find("fashion") != std::string::npos ? "fashion-mnist"
            : folder.find("mnist") != std::string::npos ? "mnist" : folder;
    batch_size_ = s.at("batch_size").get<int64_t>();
    train_ = std::make_unique<nl::Batcher>(data_.train, batch_size_, (uint64_t)s.at("seed").get<int64_t>());
  }

  std::string data_summary() const override {
    return name_ + " (" + std::to_string(data_.train.size()) + " train / " + std::to_string(data_.valid.size()) +
           " valid / " + std::to_string(data_.test.size()) + " test images)";
  }

  std::shared_ptr<nl::Module> build_model(const json& s) override {
    nl::MnistCnnConfig mc;
    mc.norm = s.at("norm").get<std::string>();
    mc.norm_opts = norm_options(s);
    mc.hidden = s.at("hidden").get<int64_t>();
    mc.conv_relu = s.at("conv_relu").get<bool>();
    return std::make_shared<nl::MnistCnn>(mc);
  }

  int64_t epoch_size(uint64_t) const override { return train_->num_batches(); }

  std::unique_ptr<TaskBatch> train_batch(uint64_t epoch, int64_t index) const override {
    if (train_->epoch() != epoch) train_->set_epoch(epoch);
    nl::Batch b = train_->batch(index);
    auto out = std::make_unique<ImageBatch>();
    out->images = b.images;
    out->labels = b.labels;
    out->items = b.labels.numel();
    return out;
  }

  nl::Variable loss(nl::Module& model, const TaskBatch& b) const override {
    const auto& ib = static_cast<const ImageBatch&>(b);
    return nl::cross_entropy(static_cast<nl::MnistCnn&>(model)(nl::Variable(ib.images)), ib.labels);
  }

  Metrics evaluate(nl::Module& model, const std::string& split) const override {
    const nl::ImageDataset& d = split == "test" ? data_.test : split == "valid" ? data_.valid : data_.train;
    return image_accuracy(model, d);
  }

  Metrics evaluate_shard(nl::Module& model, const std::string& split, EvalShard shard, double& weight) const override {
    const nl::ImageDataset& d = split == "test" ? data_.test : split == "valid" ? data_.valid : data_.train;
    return image_accuracy(model, d, shard, weight);
  }

  double paper_reference(const json& s) const override { return paper_number("xu2019", "mnist", s.at("norm").get<std::string>()); }

  std::pair<std::string, std::string> pytorch_bench(const json& s) const override {
    const std::string n = s.at("norm").get<std::string>();
    // a norm the twin lacks is timed against its LayerNorm
    return {"pytorch_mnist.py", "--batch-size " + s.at("batch_size").dump() + " --norm " +
                                    (pytorch_twin_has_norm(n) ? n : "layernorm") +
                                    (s.at("conv_relu").get<bool>() ? "" : " --no-conv-relu")};
  }

  std::unique_ptr<TaskBatch> bench_batch(const json& s) const override {
    const int64_t bs = s.at("batch_size").get<int64_t>();
    auto out = std::make_unique<ImageBatch>();
    out->images = nl::Tensor::rand({bs, 1, 28, 28});
    std::vector<int64_t> lab(bs);
    for (int64_t i = 0; i < bs; ++i) lab[i] = i % 10;
    out->labels = nl::Tensor::from_vector(lab, {bs});
    out->items = bs;
    return out;
  }

 private:
  nl::MnistLikeSplits data_;
  std::string loaded_dir_;  ///< folder data_ was read from
  std::string name_;
  int64_t batch_size_ = 32;
  std::unique_ptr<nl::Batcher> train_;
};

}  // namespace

std::unique_ptr<Task> make_mnist_task() { return std::make_unique<MnistTask>(); }

}  // namespace nlapp
