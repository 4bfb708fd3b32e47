#include "tasks/lnnet/lnnet_task.h"

#include <cmath>

#include "engine/norm_settings.h"
#include "nn/models/ln_net.h"
#include "nn/theory/ln_net_hessian.h"
#include "tasks/image_task.h"
#include "tensor/autocast.h"

namespace nlapp {
using json = nlohmann::json;

namespace {

class LnNetTask : public ImageTask {
 public:
  LnNetTask() : ImageTask("mnist", 128, /*augment_option=*/false) {}

  const TaskInfo& info() const override {
    static const TaskInfo i = [] {
      TaskInfo t{"lnnet", "Ni et al. 2024 LN-Net (Linear -> norm, no activation) on random labels", "img", "train_acc",
                 true, "Ni et al. 2024, Figure (capacity on MNIST-RL / CIFAR-10-RL): no numbers in the slides"};
      t.test_metric = "train_acc";
      t.test_source = "the weights of the best training accuracy";
      return t;
    }();
    return i;
  }

  json trainer_defaults() const override {
    // §5.1: Adam (0.9, 0.999), 150 epochs, lr halved every 20 epochs.
    return {{"lr", 1e-3},           {"max_epoch", 150}, {"lr_scheduler", "step"},
            {"lr_step_epochs", 20}, {"lr_gamma", 0.5},  {"save_interval", 0}};
  }

  std::shared_ptr<nl::Module> build_model(const json& s) override {
    nl::LnNetConfig c;
    // bench builds without data: the flattened size of its random batch
    c.in = data().train.size() ? data().features()
           : s.at("dataset").get<std::string>() == "mnist" ? 784
           : s.at("grayscale").get<bool>()                 ? 1024
                                                           : 3072;
    c.width = s.at("width").get<int64_t>();
    c.depth = s.at("depth").get<int64_t>();
    c.norm = s.at("norm").get<std::string>();
    c.norm_opts = norm_options(s);
    return std::make_shared<nl::LnNet>(c);
  }

  /// ImageTask's final test (train_acc, test_acc of the best-training-accuracy weights) plus "hessian": Ni
  /// et al. 2024's Hessian measure H (notes §2; nn/theory/ln_net_hessian.h: the closed form, summed over the
  /// norm layers, mean over the images) of the same weights on the first training batch of epoch 0, 0 for
  /// the linear models. Computed in float32 on the CPU (the model is moved there and back).
  Metrics final_test(nl::Module& model, const nl::StateDict& best, const json& s) override {
    Metrics m = ImageTask::final_test(model, best, s);
    auto* net = dynamic_cast<nl::LnNet*>(&model);
    if (!net) throw std::logic_error("lnnet: the model is not an LnNet");
    const nl::Device device = net->device();
    net->to(nl::Device::cpu());
    const nl::AutocastGuard float32(nl::DType::BFloat16, /*enabled=*/false);
    const auto batch = train_batch(0, 0);
    m["hessian"] = nl::lntheory::ln_net_hessian(*net, static_cast<const ImageBatch&>(*batch).images).total;
    net->to(device);  // the model stays where the run put it
    return m;
  }

  double paper_reference(const json&) const override { return std::nan(""); }
  std::vector<std::pair<std::string, double>> paper_columns(const json&) const override { return {}; }

 protected:
  std::vector<OptionSpec> model_settings() const override {
    std::vector<OptionSpec> v = norm_settings("layernorm", 1.0);
    v.push_back(option("width", OptKind::Int, 256, "Features of every hidden layer", 1, 65536));
    v.push_back(option("depth", OptKind::Int, 4, "Hidden Linear -> norm blocks; 0 = linear classifier", 0, 1000));
    return v;
  }
};

}  // namespace

std::unique_ptr<Task> make_lnnet_task() { return std::make_unique<LnNetTask>(); }

}  // namespace nlapp
