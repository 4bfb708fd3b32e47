// The cross-entropy on bfloat16 logits (a vocabulary projection's autocast_output): the loss is the float32
// loss of the widened logits, the gradient is bfloat16 — that loss's float32 gradient rounded once — and
// the composite kernels (a device without fused kernels) give the CPU kernel's values.
#include <catch2/catch.hpp>

#include <cmath>
#include <optional>
#include <vector>

#include "autograd/functions.h"
#include "backends/core_only_backend.h"
#include "tensor/autocast.h"

using namespace nl;

namespace {
constexpr int64_t kIgnore = -100;

// Logits [N, C] with an odd C (no vector-width row) and targets with ignored rows.
struct Batch {
  Tensor logits, target;
};
Batch make_batch(int64_t N, int64_t C) {
  manual_seed(21);
  Batch b{Tensor::randn({N, C}, 0, 4), Tensor::randint(0, C, {N})};
  auto t = b.target.to_vector<int64_t>();
  for (int64_t i = 0; i < N; i += 5) t[(size_t)i] = kIgnore;
  b.target = Tensor::from_vector<int64_t>(t, {N});
  return b;
}

struct LossGrad {
  double loss;
  Tensor grad;  // on the CPU
};
LossGrad loss_and_grad(const Tensor& logits, const Tensor& target, Device dev, double eps) {
  Variable x(logits.to(dev).clone(), true);
  Variable l = cross_entropy(x, target.to(dev), eps, kIgnore);
  l.backward();
  return {l.item(), x.grad().to(Device::cpu())};
}

// Every element of a (bfloat16) within `rel` · |b| of b: 2^-8 is one rounding to nearest of a float32 b,
// 2^-7 one bfloat16 ulp (two roundings of nearly equal float32 values); 1% slack for b's own float32 error.
void check_rounding(const Tensor& a, const Tensor& b, double rel) {
  REQUIRE(a.dtype() == DType::BFloat16);
  const auto x = a.to(DType::Float32).to_vector<float>(), y = b.to(DType::Float32).to_vector<float>();
  REQUIRE(x.size() == y.size());
  size_t bad = 0;
  for (size_t i = 0; i < x.size(); ++i)
    if (!(std::abs(x[i] - y[i]) <= 1.01 * rel * std::abs(y[i]))) ++bad;
  CHECK(bad == 0);
}
}  // namespace

TEST_CASE("cross_entropy: bfloat16 logits give the float32 loss of the widened logits and a bfloat16 gradient",
          "[autocast][loss]") {
  const Batch b = make_batch(37, 501);
  const Tensor lb = b.logits.to(DType::BFloat16), lw = lb.to(DType::Float32);
  for (double eps : {0.0, 0.1}) {
    INFO("label_smoothing " << eps);
    const LossGrad g16 = loss_and_grad(lb, b.target, Device::cpu(), eps);
    const LossGrad g32 = loss_and_grad(lw, b.target, Device::cpu(), eps);
    CHECK(g16.loss == Approx(g32.loss).epsilon(1e-6));
    CHECK(g16.grad.dtype() == DType::BFloat16);
    check_rounding(g16.grad, g32.grad, std::ldexp(1.0, -8));
    // Ignored rows get an exact zero gradient.
    const auto gv = g16.grad.to(DType::Float32).to_vector<float>();
    for (int64_t i = 0; i < 37; i += 5)
      for (int64_t c = 0; c < 501; ++c) REQUIRE(gv[(size_t)(i * 501 + c)] == 0.0f);
  }
}

TEST_CASE("cross_entropy: under autocast bfloat16 logits are read as they are, not cast", "[autocast][loss]") {
  const Batch b = make_batch(6, 11);
  AutocastGuard guard(DType::BFloat16);
  Variable x(b.logits.to(DType::BFloat16), true);
  AutocastTrace trace;
  Variable l = cross_entropy(x, b.target, 0.1, kIgnore);
  CHECK(l.dtype() == DType::Float32);
  REQUIRE(trace.entries().size() >= 1);
  CHECK(trace.entries().front().second == DType::BFloat16);
  l.backward();
  CHECK(x.grad().dtype() == DType::BFloat16);
}

TEST_CASE("cross_entropy: composite kernels match the CPU kernel on bfloat16 logits", "[autocast][loss][fallback]") {
  const Batch b = make_batch(23, 67);
  const Tensor lb = b.logits.to(DType::BFloat16);
  const LossGrad cpu = loss_and_grad(lb, b.target, Device::cpu(), 0.1);
  std::optional<LossGrad> fake;
  {
    nltest::FakeDevice fd;
    REQUIRE_FALSE(backend_for(DeviceType::CUDA).has_own_fused());
    fake = loss_and_grad(lb, b.target, Device::cuda(0), 0.1);
  }
  CHECK(fake->loss == Approx(cpu.loss).epsilon(1e-6));
  CHECK(fake->grad.dtype() == DType::BFloat16);
  check_rounding(fake->grad, cpu.grad.to(DType::Float32), std::ldexp(1.0, -7));
}

TEST_CASE("cross_entropy_backward: mismatched statistics are a clear error", "[loss]") {
  const Batch b = make_batch(4, 5);
  const CrossEntropyRows r = cross_entropy_rows(b.logits, b.target, kIgnore, 0.0);
  CHECK(r.stats.shape() == Shape{4, 2});
  CHECK_THROWS_WITH(cross_entropy_backward(Tensor::ones({4}), b.logits, Tensor::ones({4, 3}), b.target, kIgnore, 0.0),
                    Catch::Contains("stats [N, 2]"));
  CHECK_THROWS_WITH(cross_entropy_backward(Tensor::ones({4}, DType::Float64), b.logits, r.stats, b.target, kIgnore, 0.0),
                    Catch::Contains("must be float32"));
}

namespace {
// Exactly equal elements (as float32: bfloat16 widens exactly).
bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.to(DType::Float32).to_vector<float>() == b.to(DType::Float32).to_vector<float>();
}
// cross_entropy_backward for gloss = scale / (rows not ignored) on every row, from a plain forward.
Tensor recomputed_grad(const Tensor& logits, const Tensor& target, double eps, double scale) {
  int64_t valid = 0;
  for (int64_t t : target.to_vector<int64_t>()) valid += t != kIgnore;
  const CrossEntropyRows r = cross_entropy_rows(logits, target, kIgnore, eps);
  const double gl = scale / (double)std::max<int64_t>(valid, 1);
  return cross_entropy_backward(Tensor::full({logits.size(0)}, (double)(float)gl, r.stats.dtype()), logits, r.stats,
                                target, kIgnore, eps);
}
}  // namespace

TEST_CASE("cross_entropy: the gradient written by the forward has the recomputed gradient's bits",
          "[autocast][loss]") {
  const Batch b = make_batch(29, 301);
  for (DType dt : {DType::BFloat16, DType::Float32}) {
    INFO(dtype_name(dt));
    const Tensor x = b.logits.to(dt);
    // The kernel itself, for a scale that is not 1.
    const CrossEntropyRows ahead = cross_entropy_rows(x, b.target, kIgnore, 0.1, 0.125);
    const CrossEntropyRows plain = cross_entropy_rows(x, b.target, kIgnore, 0.1);
    CHECK(same_bits(ahead.loss, plain.loss));
    CHECK(same_bits(ahead.stats, plain.stats));
    const Tensor want = cross_entropy_backward(Tensor::full({29}, 0.125, plain.stats.dtype()), x, plain.stats,
                                               b.target, kIgnore, 0.1);
    CHECK(same_bits(ahead.grad, want));
  }
  // Through autograd: the usual backward (dL/dloss = 1) uses the forward's gradient, a scaled loss
  // recomputes; both equal the recomputed formula bit for bit.
  const Tensor lb = b.logits.to(DType::BFloat16);
  Variable x1(lb.clone(), true), x2(lb.clone(), true);
  cross_entropy(x1, b.target, 0.1, kIgnore).backward();
  (cross_entropy(x2, b.target, 0.1, kIgnore) * 0.5).backward();
  CHECK(same_bits(x1.grad(), recomputed_grad(lb, b.target, 0.1, 1.0)));
  CHECK(same_bits(x2.grad(), recomputed_grad(lb, b.target, 0.1, 0.5)));
}
