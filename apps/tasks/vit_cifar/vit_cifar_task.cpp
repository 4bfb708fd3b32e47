#include "tasks/vit_cifar/vit_cifar_task.h"

#include <cmath>

#include "engine/norm_settings.h"
#include "nn/models/vit.h"
#include "report/paper_numbers.h"
#include "tasks/image_task.h"

namespace nlapp {
using json = nlohmann::json;

namespace {

class VitCifarTask : public ImageTask {
 public:
  VitCifarTask() : ImageTask("cifar10", 128, /*augment_option=*/true) {}

  const TaskInfo& info() const override {
    static const TaskInfo i = [] {
      TaskInfo t{"vit-cifar", "Ni et al. 2024 Tiny-ViT on CIFAR-10 (patch 4, d 192, 6 layers, 3 heads, pre-norm)", "img",
                 "acc", true, "Ni et al. 2024 slides, 'Tiny-ViT, CIFAR-10' (LN 88.81%, LN-G 89.26%; setup not given)"};
      t.test_metric = "test_acc";
      return t;
    }();
    return i;
  }

  json trainer_defaults() const override {
    // The slides give no training setup; AdamW lr 1e-3, weight decay 0.05 is the usual small-ViT recipe
    // on CIFAR-10 (inferred).
    return {{"optimizer", "adamw"}, {"lr", 1e-3}, {"weight_decay", 0.05}, {"max_epoch", 100}, {"save_interval", 0}};
  }

  std::shared_ptr<nl::Module> build_model(const json& s) override {
    nl::VitConfig c;
    c.in_channels = s.at("dataset").get<std::string>() == "cifar10" && !s.at("grayscale").get<bool>() ? 3 : 1;
    c.image_size = s.at("dataset").get<std::string>() == "cifar10" ? 32 : 28;
    c.patch = s.at("patch").get<int64_t>();
    c.d_model = s.at("d_model").get<int64_t>();
    c.layers = s.at("layers").get<int64_t>();
    c.n_heads = s.at("n_heads").get<int64_t>();
    c.ffn_dim = s.at("ffn_dim").get<int64_t>();
    c.dropout = s.at("dropout").get<double>();
    c.attention_dropout = s.at("attention_dropout").get<double>();
    c.norm = s.at("norm").get<std::string>();
    c.norm_options = norm_options(s);
    return std::make_shared<nl::VisionTransformer>(c);
  }

  double paper_reference(const json& s) const override { return paper_number("ni2024", "vit-cifar", s.at("norm")); }
  std::vector<std::pair<std::string, double>> paper_columns(const json& s) const override {
    return {{"slides test %", paper_number("ni2024", "vit-cifar", s.at("norm"))}};
  }

 protected:
  std::vector<OptionSpec> model_settings() const override {
    std::vector<OptionSpec> v = norm_settings("layernorm", 1.0);
    v.push_back(option("patch", OptKind::Int, 4, "Patch side (must divide the image side: 32 for CIFAR-10)", 1, 32));
    v.push_back(option("d_model", OptKind::Int, 192, "Token width", 1, 65536));
    v.push_back(option("layers", OptKind::Int, 6, "Encoder layers", 1, 256));
    v.push_back(option("n_heads", OptKind::Int, 3, "Attention heads (must divide --d-model)", 1, 1024));
    v.push_back(option("ffn_dim", OptKind::Int, 768, "MLP width of each layer", 1, 1 << 20));
    v.push_back(option("dropout", OptKind::Float, 0.0, "Dropout on tokens and sub-layer outputs", 0, 0.99));
    v.push_back(option("attention_dropout", OptKind::Float, 0.0, "Dropout on attention weights", 0, 0.99));
    return v;
  }
};

}  // namespace

std::unique_ptr<Task> make_vit_cifar_task() { return std::make_unique<VitCifarTask>(); }

}  // namespace nlapp
