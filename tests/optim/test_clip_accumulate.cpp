// Gradient clipping by global norm (torch.nn.utils.clip_grad_norm_) and gradient accumulation.
#include <catch2/catch.hpp>

#include <cmath>

#include "autograd/functions.h"
#include "backends/core_only_backend.h"
#include "optim/accumulate.h"
#include "optim/clip.h"
#include "optim/optimizer.h"
#include "tensor/ops.h"

using namespace nl;
using Catch::Matchers::Contains;

static Variable with_grad(std::vector<double> g, DType dt = DType::Float64) {
  Variable v(Tensor::zeros({(int64_t)g.size()}, dt), true);
  v.set_grad(Tensor::from_vector<double>(g, {(int64_t)g.size()}).to(dt));
  return v;
}

TEST_CASE("clip: total norm over all grads and torch's rescaling with the 1e-6", "[optim][clip]") {
  // Grads (3, 4) and (12): total norm √(9 + 16 + 144) = 13.
  Variable a = with_grad({3, 4}), b = with_grad({12}), none(Tensor::zeros({2}, DType::Float64), true);
  const Tensor old = a.grad();
  const double n = clip_grad_norm_({a, b, none}, 1.0);
  CHECK(n == 13.0);
  const double coef = 1.0 / (13.0 + 1e-6);
  CHECK(a.grad().to_vector<double>()[0] == Approx(3 * coef).epsilon(1e-15));
  CHECK(a.grad().to_vector<double>()[1] == Approx(4 * coef).epsilon(1e-15));
  CHECK(b.grad().to_vector<double>()[0] == Approx(12 * coef).epsilon(1e-15));
  // Values printed by torch 1.13 for the same call.
  CHECK(a.grad().to_vector<double>()[0] == Approx(0.23076921301775288).epsilon(1e-15));
  CHECK(b.grad().to_vector<double>()[0] == Approx(0.9230768520710115).epsilon(1e-15));
  CHECK(old.to_vector<double>() == std::vector<double>{3, 4});  // replaced, not modified in place
  CHECK(grad_norm({a, b}) == Approx(1.0).epsilon(1e-6));
  CHECK(!none.grad().defined());
}

TEST_CASE("clip: below max_norm leaves grads untouched, float32 norm accumulated in double", "[optim][clip]") {
  Variable a = with_grad({0.3, 0.4});
  const Tensor before = a.grad();
  CHECK(clip_grad_norm_({a}, 1.0) == Approx(0.5));
  CHECK(a.grad().is_alias_of(before));
  // 1e6 float32 elements of 1e-3: a float accumulator drifts, double gives √(1e6·1e-6) = 1 closely.
  Variable big(Tensor::zeros({1000000}), true);
  big.set_grad(Tensor::full({1000000}, 1e-3));
  CHECK(grad_norm({big}) == Approx(1.0).epsilon(1e-6));
  CHECK(clip_grad_norm_({}, 1.0) == 0.0);
  CHECK_THROWS_WITH(clip_grad_norm_({a}, -1.0), Contains("max_norm must be >= 0"));
}

TEST_CASE("accumulate: mean over micro-batches equals one big batch", "[optim][accumulate]") {
  // loss_k = mean over a micro-batch of (w·x_i)²/2 → dloss/dw = mean(w x_i²). Two micro-batches of two
  // samples, averaged, must equal the gradient of the mean over all four samples.
  const std::vector<double> xs = {1, 2, 3, 4};
  Variable w(Tensor::full({1}, 0.5, DType::Float64), true, "w");
  GradAccumulator acc({w}, 2);
  for (int k = 0; k < 2; ++k) {
    Tensor x = Tensor::from_vector<double>({xs[2 * k], xs[2 * k + 1]}, {2});
    Variable loss = mean(square(mul(Variable(x), w))) * 0.5;
    loss.backward();
    CHECK(acc.accumulate() == (k == 1));
  }
  CHECK(acc.pending() == 2);
  CHECK(acc.finalize() == 0.5);
  CHECK(acc.pending() == 0);
  // mean(w·x²) over {1,2,3,4} = 0.5·30/4 = 3.75.
  CHECK(w.grad().item() == Approx(3.75));
  // The big-batch gradient, for comparison.
  Variable w2(Tensor::full({1}, 0.5, DType::Float64), true);
  Variable loss = mean(square(mul(Variable(Tensor::from_vector<double>(xs, {4})), w2))) * 0.5;
  loss.backward();
  CHECK(w.grad().item() == Approx(w2.grad().item()).epsilon(1e-15));
}

TEST_CASE("accumulate: fairseq style sums then divides by the total sample size", "[optim][accumulate]") {
  // Micro-batches of unequal size (1 and 3 samples) with SUM losses: grads add up to Σ w·x_i² and are
  // divided by 4 samples — the per-sample mean, independent of how samples were split.
  Variable w(Tensor::full({1}, 0.5, DType::Float64), true);
  GradAccumulator acc({w}, 2, GradAccumulator::Normalize::BySampleSize);
  Variable l1 = sum(square(mul(Variable(Tensor::from_vector<double>({1}, {1})), w))) * 0.5;
  l1.backward();
  CHECK(!acc.accumulate(1));
  Variable l2 = sum(square(mul(Variable(Tensor::from_vector<double>({2, 3, 4}, {3})), w))) * 0.5;
  l2.backward();
  CHECK(acc.accumulate(3));
  CHECK(acc.finalize() == 0.25);
  CHECK(w.grad().item() == Approx(3.75));
}

TEST_CASE("accumulate: drives an optimizer every k micro-batches, errors", "[optim][accumulate]") {
  Variable w(Tensor::full({1}, 1.0, DType::Float64), true);
  SGD opt({w}, SGDOptions{.lr = 0.1});
  GradAccumulator acc({w}, 3);
  int steps = 0;
  for (int micro = 0; micro < 7; ++micro) {
    Variable loss = sum(w * 2.0);  // gradient 2 per micro-batch
    loss.backward();
    if (acc.accumulate()) {
      acc.finalize();
      CHECK(w.grad().item() == Approx(2.0));  // averaged, not summed
      opt.step();
      opt.zero_grad();
      ++steps;
    }
  }
  CHECK(steps == 2);
  CHECK(w.data().item() == Approx(1.0 - 2 * 0.1 * 2.0));
  CHECK(acc.pending() == 1);
  CHECK(acc.finalize() == 1.0);  // a partial group at the end is averaged over what it holds
  CHECK_THROWS_WITH(acc.finalize(), Contains("no micro-batch"));
  CHECK_THROWS_WITH(GradAccumulator({w}, 0), Contains("update_freq must be >= 1"));
}

namespace {
/// The fake device, counting its device -> host copies; registered as cuda:0 while it lives.
struct CountingBackend final : nltest::CoreOnlyBackend {
  int to_host = 0;
  CountingBackend() { register_backend(DeviceType::CUDA, this); }
  ~CountingBackend() override { register_backend(DeviceType::CUDA, nullptr); }
  void copy_to_host(void* dst, const void* src, size_t n, int d) override {
    ++to_host;
    nltest::CoreOnlyBackend::copy_to_host(dst, src, n, d);
  }
};
}  // namespace

TEST_CASE("clip_grad_norm_ on a device reads one scalar back, whatever the parameter count", "[optim][clip]") {
  std::vector<Variable> host;
  for (int i = 0; i < 6; ++i) {
    host.emplace_back(Tensor::zeros({17 + i, 5}), true);
    host.back().set_grad(Tensor::randn({17 + i, 5}, 0, 3));
  }
  CountingBackend counting;
  std::vector<Variable> dev;
  for (const Variable& h : host) {
    dev.emplace_back(h.data().to(Device::cuda(0)), true);
    dev.back().set_grad(h.grad().to(Device::cuda(0)));
  }
  counting.to_host = 0;
  const double norm_dev = clip_grad_norm_(dev, 1.0);
  CHECK(counting.to_host == 1);  // one per parameter before the fix
  const double norm_host = clip_grad_norm_(host, 1.0);
  CHECK(norm_dev == Approx(norm_host).epsilon(1e-12));
  CHECK(norm_host > 1.0);  // the gradients were clipped
  for (size_t i = 0; i < host.size(); ++i) {
    const auto d = dev[i].grad().to(Device::cpu()).to_vector<float>(), h = host[i].grad().to_vector<float>();
    for (size_t k = 0; k < h.size(); ++k) CHECK(d[k] == Approx(h[k]).epsilon(1e-6));
  }
}
