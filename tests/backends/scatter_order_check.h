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

/// Adds to `order_matters` / `bad` over the targets of `got` (flat): contribution e (ascending) adds
/// vals[e] to target[e], starting from init; `bad` counts results that are not the in-order sum,
/// `order_matters` targets whose reversed-order sum differs.
template <typename T>
void count_order_mismatches(const std::vector<T>& got, const std::vector<double>& init, const std::vector<int64_t>& target,
                            const std::vector<double>& vals, int64_t& bad, int64_t& order_matters) {
  std::vector<std::vector<T>> per(got.size());
  for (size_t e = 0; e < vals.size(); ++e) per[(size_t)target[e]].push_back((T)vals[e]);
  for (size_t t = 0; t < got.size(); ++t) {
    const T fwd = ordered_sum((T)init[t], per[t], false);
    order_matters += fwd != ordered_sum((T)init[t], per[t], true);
    bad += got[t] != fwd;
  }
}

/// Runs index_add_rows and scatter_add_rows of the backend of `dev` on adversarial inputs and returns the
/// number of result elements that differ (bitwise) from the serial index-order sum.
template <typename T>
int64_t scatter_order_mismatches(nl::Device dev, nl::DType dt, uint32_t seed) {
  nl::Backend& be = nl::backend_for(dev.type);
  std::mt19937 rng(seed);
  int64_t bad = 0, order_matters = 0;
  // index_add_rows: table [V, D] += src [n, D] at rows idx [n]; scatter_add_rows: gin [R, C] += g [R, K]
  // at columns idx [R, K]. Both as (out shape, idx shape, contribution shape, index bound, flat target of e).
  struct Case {
    nl::Shape out, idx, src;
    int64_t bound;
    bool rows;  // index_add_rows (else scatter_add_rows)
  };
  for (const Case& c : {Case{{5, 3}, {300}, {300, 3}, 5, true}, Case{{4, 3}, {4, 100}, {4, 100}, 3, false}}) {
    const int64_t nout = c.out[0] * c.out[1], nidx = c.rows ? c.idx[0] : c.idx[0] * c.idx[1], nsrc = c.src[0] * c.src[1];
    std::vector<int64_t> idx((size_t)nidx), target((size_t)nsrc);
    for (auto& i : idx) i = (int64_t)(rng() % (uint32_t)c.bound);
    const int64_t D = c.out[1], K = c.rows ? 0 : c.idx[1];
    for (int64_t e = 0; e < nsrc; ++e)
      target[(size_t)e] = c.rows ? idx[(size_t)(e / D)] * D + e % D : (e / K) * D + idx[(size_t)e];
    const std::vector<double> vals = adversarial_values(nsrc, dt, seed + 1), init = adversarial_values(nout, dt, seed + 2);
    nl::Tensor out = nl::Tensor::from_vector<double>(init, c.out).to(dt).to(dev);
    nl::Tensor src = nl::Tensor::from_vector<double>(vals, c.src).to(dt).to(dev);
    nl::Tensor ix = nl::Tensor::from_vector<int64_t>(idx, c.idx).to(dev);
    if (c.rows) be.index_add_rows(out.desc(), ix.desc(), src.desc());
    else be.scatter_add_rows(out.desc(), ix.desc(), src.desc());
    count_order_mismatches(out.to_vector<T>(), init, target, vals, bad, order_matters);
  }
  REQUIRE(order_matters >= 10);  // of 27 sums: the inputs tell the summation orders apart
  return bad;
}

}  // namespace nltest
