#include "tasks/resnet_cifar/resnet_cifar_task.h"

#include <cmath>
#include <map>

#include "nn/models/resnet_cifar.h"
#include "report/paper_numbers.h"
#include "tasks/image_task.h"

namespace nlapp {
using json = nlohmann::json;

namespace {

class ResNetCifarTask : public ImageTask {
 public:
  ResNetCifarTask() : ImageTask("cifar10", 128, /*augment_option=*/true) {}

  const TaskInfo& info() const override {
    static const TaskInfo i = [] {
      TaskInfo t{"resnet-cifar", "Ni et al. 2024 CIFAR ResNet without ReLU (norm is the only nonlinearity)", "img",
                 "acc", true, "Ni et al. 2024 slides, 'ResNet without ReLU on CIFAR-10' (epochs not given)"};
      t.test_metric = "test_acc";
      return t;
    }();
    return i;
  }

  json trainer_defaults() const override {
    // He et al. 2016 §4.2 (the paper's schedule was not retrieved): SGD momentum 0.9, lr 0.1, wd 1e-4.
    return {{"optimizer", "sgd"}, {"lr", 0.1}, {"momentum", 0.9}, {"weight_decay", 1e-4}, {"max_epoch", 160},
            {"save_interval", 0}};
  }

  std::shared_ptr<nl::Module> build_model(const json& s) override {
    nl::ResNetCifarConfig c;
    c.depth = s.at("depth").get<int64_t>();
    c.norm = s.at("norm").get<std::string>();
    c.groups = s.at("groups").get<int64_t>();
    c.in_channels = s.at("dataset").get<std::string>() == "cifar10" && !s.at("grayscale").get<bool>() ? 3 : 1;
    return std::make_shared<nl::ResNetCifar>(c);
  }

  double paper_reference(const json& s) const override {
    return paper_number("ni2024", "resnet-cifar-test", s.at("norm").get<std::string>());
  }
  std::vector<std::pair<std::string, double>> paper_columns(const json& s) const override {
    const std::string n = s.at("norm").get<std::string>();
    return {{"slides train %", paper_number("ni2024", "resnet-cifar-train", n)},
            {"slides test %", paper_number("ni2024", "resnet-cifar-test", n)}};
  }

 protected:
  std::vector<OptionSpec> model_settings() const override {
    return {choice_option("norm", "lng", nl::image_norm_names(), "Norm after every convolution (lng = LN-G-Position)"),
            option("groups", OptKind::Int, 4, "Groups G of groupnorm / lng (must divide 16, 32 and 64)", 1, 16),
            option("depth", OptKind::Int, 20, "6n + 2 layers (20 = ResNet-20)", 8, 1000)};
  }
};

}  // namespace

std::unique_ptr<Task> make_resnet_cifar_task() { return std::make_unique<ResNetCifarTask>(); }

}  // namespace nlapp
