#pragma once
// The order contract of the scatter kernels (embedding backward = index_add_rows, gather backward =
// scatter_add_rows, and through them max-pool backward and the composite cross-entropy): every device
// adds the contributions to one target in index order, as the CPU's serial loop does, so a run repeats
// bit for bit (float atomicAdd adds them in whatever order the threads arrive). The inputs are adversarial:
// values of both signs spread over ten decades, many contributions per target, so that summing them in
// another order changes the float result -- the check REQUIREs that reversing the order does, so it can
// fail. Shared by the CPU / fake-device tests (test_scatter_order.cpp) and the CUDA tests.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "backends/backend.h"
#include "tensor/tensor.h"

namespace nltest {

/// Adversarial summands: +-10^e, e uniform over ten (float32) or twenty (float64) decades.
inline std::vector<double> adversarial_values(int64_t n, nl::DType dt, uint32_t seed) {
  std::mt19937 rng(seed);
  const double top = dt == nl::DType::Float32 ? 7.0 : 15.0;
  std::uniform_real_distribution<double> e(top - (dt == nl::DType::Float32 ? 10.0 : 20.0), top);
  std::vector<double> v((size_t)n);
  for (auto& x : v) x = ((rng() & 1) ? 1.0 : -1.0) * std::pow(10.0, e(rng));
  return v;
}

/// Sums `vals` in dtype T: the given order (forward) or reversed; starts from `init`.
template <typename T>
T ordered_sum(T init, const std::vector<T>& vals, bool reversed) {
  T acc = init;
  if (reversed)
    for (size_t i = vals.size(); i-- > 0;) acc += vals[i];
  else
    for (const T& v : vals) acc += v;
  return acc;
}

/// Runs index_add_rows and scatter_add_rows of the backend of `dev` on adversarial inputs and returns the
/// number of result elements that differ (bitwise) from the serial index-order sum.
template <typename T>
int64_t scatter_order_mismatches(nl::Device dev, nl::DType dt, uint32_t seed) {
  nl::Backend& be = nl::backend_for(dev.type);
  std::mt19937 rng(seed);
  int64_t bad = 0, order_matters = 0;
  {  // index_add_rows: table [V, D] += src [n, D] at rows idx [n]
    const int64_t V = 5, D = 3, n = 300;
    std::vector<int64_t> idx((size_t)n);
    for (auto& i : idx) i = (int64_t)(rng() % V);
    const std::vector<double> s = adversarial_values(n * D, dt, seed + 1), t0 = adversarial_values(V * D, dt, seed + 2);
    nl::Tensor table = nl::Tensor::from_vector<double>(t0, {V, D}).to(dt).to(dev);
    nl::Tensor src = nl::Tensor::from_vector<double>(s, {n, D}).to(dt).to(dev);
    nl::Tensor ix = nl::Tensor::from_vector<int64_t>(idx, {n}).to(dev);
    be.index_add_rows(table.desc(), ix.desc(), src.desc());
    const std::vector<T> got = table.to_vector<T>();
    for (int64_t v = 0; v < V; ++v)
      for (int64_t d = 0; d < D; ++d) {
        std::vector<T> vals;
        for (int64_t i = 0; i < n; ++i)
          if (idx[(size_t)i] == v) vals.push_back((T)s[(size_t)(i * D + d)]);
        const T fwd = ordered_sum((T)t0[(size_t)(v * D + d)], vals, false);
        order_matters += fwd != ordered_sum((T)t0[(size_t)(v * D + d)], vals, true);
        bad += got[(size_t)(v * D + d)] != fwd;
      }
  }
  {  // scatter_add_rows: gin [R, C] += g [R, K] at columns idx [R, K]
    const int64_t R = 4, C = 3, K = 100;
    std::vector<int64_t> idx((size_t)(R * K));
    for (auto& i : idx) i = (int64_t)(rng() % C);
    const std::vector<double> g = adversarial_values(R * K, dt, seed + 3), z0 = adversarial_values(R * C, dt, seed + 4);
    nl::Tensor gin = nl::Tensor::from_vector<double>(z0, {R, C}).to(dt).to(dev);
    nl::Tensor gt = nl::Tensor::from_vector<double>(g, {R, K}).to(dt).to(dev);
    nl::Tensor ix = nl::Tensor::from_vector<int64_t>(idx, {R, K}).to(dev);
    be.scatter_add_rows(gin.desc(), ix.desc(), gt.desc());
    const std::vector<T> got = gin.to_vector<T>();
    for (int64_t r = 0; r < R; ++r)
      for (int64_t c = 0; c < C; ++c) {
        std::vector<T> vals;
        for (int64_t k = 0; k < K; ++k)
          if (idx[(size_t)(r * K + k)] == c) vals.push_back((T)g[(size_t)(r * K + k)]);
        const T fwd = ordered_sum((T)z0[(size_t)(r * C + c)], vals, false);
        order_matters += fwd != ordered_sum((T)z0[(size_t)(r * C + c)], vals, true);
        bad += got[(size_t)(r * C + c)] != fwd;
      }
  }
  REQUIRE(order_matters >= 10);  // of 27 sums: the inputs tell the summation orders apart
  return bad;
}

}  // namespace nltest
