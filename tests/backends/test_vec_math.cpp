// cpu::vexp (the vectorised float exponential of the softmax, cross-entropy and attention kernels)
// against std::exp in double, and the float32 softmax / cross-entropy it feeds against float64.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "autograd/functions.h"
#include "backends/cpu/vec_math.h"
#include "tensor/tensor.h"

using namespace nl;

TEST_CASE("vexp float is within 3e-7 relative of exp over its whole range", "[vec_math]") {
  double worst = 0, at = 0;
  for (double x = -87.3; x <= 88.3; x += 1e-3) {
    const float xf = (float)x;
    const double ref = std::exp((double)xf);
    const double err = std::abs((double)cpu::vexp(xf) - ref) / ref;
    if (err > worst) worst = err, at = x;
  }
  INFO("worst relative error " << worst << " at x = " << at);
  CHECK(worst < 3e-7);
  CHECK(cpu::vexp(0.0f) == 1.0f);
}

TEST_CASE("vexp float saturates to exact 0 and inf and propagates NaN", "[vec_math]") {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(cpu::vexp(-inf) == 0.0f);  // masked logits give exactly zero weight
  CHECK(cpu::vexp(-100.0f) == 0.0f);
  CHECK(cpu::vexp(inf) == inf);
  CHECK(cpu::vexp(89.0f) == inf);
  CHECK(std::isnan(cpu::vexp(std::numeric_limits<float>::quiet_NaN())));
  CHECK(cpu::vexp(-87.0f) > 0.0f);
  CHECK(cpu::vexp(88.0f) < inf);
}

TEST_CASE("float32 softmax and label-smoothed cross-entropy agree with float64 on a large vocabulary", "[vec_math]") {
  std::mt19937 rng(7);
  std::normal_distribution<double> nd(0.0, 4.0);
  const int64_t N = 37, C = 8003;
  Tensor x64 = Tensor::empty({N, C}, DType::Float64);
  for (int64_t i = 0; i < N * C; ++i) x64.data<double>()[i] = nd(rng);
  Tensor tgt = Tensor::empty({N}, DType::Int64);
  for (int64_t i = 0; i < N; ++i) tgt.data<int64_t>()[i] = (i * 977) % C;
  tgt.data<int64_t>()[3] = 0;  // an ignored row
  Tensor x32 = x64.to(DType::Float32);
  Variable v64(x64, true), v32(x32, true);
  Variable l64 = cross_entropy(v64, tgt, 0.1, 0), l32 = cross_entropy(v32, tgt, 0.1, 0);
  CHECK(l32.item() == Approx(l64.item()).epsilon(1e-6));
  l64.backward();
  l32.backward();
  double worst = 0;
  for (int64_t i = 0; i < N * C; ++i)
    worst = std::max(worst, std::abs((double)v32.grad().data<float>()[i] - v64.grad().data<double>()[i]));
  CHECK(worst < 1e-7);
  Tensor s64 = softmax(Variable(x64), -1).data(), s32 = softmax(Variable(x32), -1).data();
  Tensor ls64 = log_softmax(Variable(x64), -1).data(), ls32 = log_softmax(Variable(x32), -1).data();
  double ws = 0, wl = 0;
  for (int64_t i = 0; i < N * C; ++i) {
    ws = std::max(ws, std::abs((double)s32.data<float>()[i] - s64.data<double>()[i]));
    wl = std::max(wl, std::abs((double)ls32.data<float>()[i] - ls64.data<double>()[i]));
  }
  CHECK(ws < 1e-6);
  CHECK(wl < 1e-4);
}
