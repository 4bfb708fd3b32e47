// cpu::vexp (the vectorised float exponential of the softmax, cross-entropy and attention kernels)
// against std::exp in double, and the float32 softmax / cross-entropy it feeds against float64.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>
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

namespace {
// lane_sum's documented order, written out: lane l sums the terms i ≡ l (mod 16) of the full blocks in
// order, the tail's terms go to lanes 0.., then lane l += lane l + w for w = 8, 4, 2, 1. `fused`: each term
// added as one fused multiply-add of a[i] and b[i] (lane_dot on a CPU with FMA).
float lane_reference(int64_t n, const float* a, const float* b, bool fused) {
  float acc[16] = {};
  for (int64_t i = 0; i < n; ++i) {
    float& s = acc[i % 16];
    s = b ? (fused ? std::fma(a[i], b[i], s) : s + a[i] * b[i]) : s + a[i];
  }
  for (int w = 8; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  return acc[0];
}
// The same order in double lanes, each float term widened: lane_sum_double's documented result.
double lane_reference_double(int64_t n, const float* a) {
  double acc[16] = {};
  for (int64_t i = 0; i < n; ++i) acc[i % 16] += (double)a[i];
  for (int w = 8; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  return acc[0];
}
bool same_bits(float x, float y) { return std::memcmp(&x, &y, sizeof x) == 0; }
bool same_bits(double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; }
}  // namespace

TEST_CASE("lane sums: the documented 16-lane order, bit for bit, for every row length and tail", "[vec_math]") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> a(200), b(200);
  // magnitudes far apart, so that a different order of additions gives different bits
  for (size_t i = 0; i < a.size(); ++i) a[i] = u(rng) * std::ldexp(1.0f, (int)(i * 7 % 40) - 20), b[i] = u(rng);
  a[5] = -0.0f;
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
  const bool fused = true;  // lane_dot's vector paths add each product with one fused multiply-add
#else
  const bool fused = false;
#endif
  for (int64_t n = 0; n <= 80; ++n)
    for (int64_t off : {0, 1, 3}) {  // rows at addresses not aligned to a vector
      const float *pa = a.data() + off, *pb = b.data() + off;
      INFO("n = " << n << ", offset " << off);
      const float ref_sum = lane_reference(n, pa, nullptr, false);
      CHECK(same_bits(cpu::lane_sum<float>(n, [&](int64_t j) { return pa[j]; }), ref_sum));
      CHECK(same_bits(cpu::lane_sum_of<float>(n, pa), ref_sum));
      CHECK(same_bits(cpu::lane_sum_double(n, pa), lane_reference_double(n, pa)));
#if defined(__AVX512F__) || defined(__AVX2__) || !defined(__FMA__)
      CHECK(same_bits(cpu::lane_dot<float>(n, pa, pb), lane_reference(n, pa, pb, fused)));
#endif
    }
  // a row of negative zeros sums to +0 as the lanes start at +0 (as lane_sum); non-finite rows keep their
  // IEEE results
  const std::vector<float> nz(37, -0.0f);
  CHECK(same_bits(cpu::lane_sum_of<float>(37, nz.data()), cpu::lane_sum<float>(37, [&](int64_t j) { return nz[j]; })));
  std::vector<float> w(37, 1.0f);
  w[33] = std::numeric_limits<float>::quiet_NaN();
  CHECK(std::isnan(cpu::lane_sum_of<float>(37, w.data())));
  CHECK(std::isnan(cpu::lane_sum_double(37, w.data())));
  CHECK(std::isnan(cpu::lane_dot<float>(37, w.data(), w.data())));
  w[33] = std::numeric_limits<float>::infinity();
  CHECK(cpu::lane_sum_of<float>(37, w.data()) == std::numeric_limits<float>::infinity());
}
