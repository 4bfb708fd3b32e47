#pragma once
// A data-free task for trainer tests: linear regression y = x·w* on 64 fixed random rows, batches of 8
// in a seeded order, metric "mse" (lower is better). `nan_at` makes the loss NaN from that update on.
#include <cmath>
#include <limits>

#include "autograd/functions.h"
#include "data/image_dataset.h"
#include "engine/task.h"
#include "nn/linear.h"

namespace nltest {

struct ToyBatch : nlapp::TaskBatch {
  nl::Tensor x, y;
  std::vector<nl::Tensor*> tensors() override { return {&x, &y}; }
};

class ToyTask : public nlapp::Task {
 public:
  int64_t nan_at = -1;  ///< the batch index (global count of loss calls, 1-based) whose loss is NaN
  int64_t batches = 8;  ///< batches per epoch (0: a training set that gives none)
  mutable int64_t calls = 0;

  const nlapp::TaskInfo& info() const override {
    static const nlapp::TaskInfo i{"toy", "linear regression", "row", "mse", false, "none"};
    return i;
  }
  std::vector<nlapp::OptionSpec> settings() const override { return {}; }
  nlohmann::json trainer_defaults() const override { return {{"lr", 0.05}, {"max_epoch", 3}, {"log_interval", 2}}; }
  void setup(const nlohmann::json& s) override {
    nl::manual_seed(99);
    x_ = nl::Tensor::randn({64, 4});
    nl::Tensor w = nl::Tensor::from_vector<float>({1, -2, 0.5f, 3}, {4, 1});
    y_ = nl::matmul(x_, w);
    seed_ = (uint64_t)s.at("seed").get<int64_t>();
  }
  std::string data_summary() const override { return "64 synthetic rows"; }
  std::shared_ptr<nl::Module> build_model(const nlohmann::json&) override { return std::make_shared<nl::Linear>(4, 1); }
  int64_t epoch_size(uint64_t) const override { return batches; }
  std::unique_ptr<nlapp::TaskBatch> train_batch(uint64_t epoch, int64_t index) const override {
    auto order = nl::shuffled_indices(64, seed_, epoch);
    std::vector<int64_t> idx(order.begin() + index * 8, order.begin() + index * 8 + 8);
    nl::Tensor it = nl::Tensor::from_vector(idx, {8});
    auto b = std::make_unique<ToyBatch>();
    b->x = nl::index_select(x_, 0, it);
    b->y = nl::index_select(y_, 0, it);
    b->items = 8;
    return b;
  }
  nl::Variable loss(nl::Module& m, const nlapp::TaskBatch& tb) const override {
    const auto& b = static_cast<const ToyBatch&>(tb);
    ++calls;
    nl::Variable d = m(nl::Variable(b.x)) - nl::Variable(b.y);
    nl::Variable l = nl::mean(d * d);
    if (nan_at > 0 && calls >= nan_at) l = l * std::numeric_limits<double>::quiet_NaN();
    return l;
  }
  nlapp::Metrics evaluate(nl::Module& m, const std::string&) const override {
    nl::NoGradGuard ng;
    nl::Tensor d = nl::sub(m(nl::Variable(x_.to(m.device()))).data(), y_.to(m.device()));
    return {{"mse", nl::mean(nl::mul(d, d)).item()}};
  }
  double paper_reference(const nlohmann::json&) const override { return std::nan(""); }
  std::unique_ptr<nlapp::TaskBatch> bench_batch(const nlohmann::json&) const override { return train_batch(0, 0); }

 private:
  nl::Tensor x_, y_;
  uint64_t seed_ = 1;
};

}  // namespace nltest
