#pragma once
// The rounding contract of the random fills, shared by the CPU / fake-device tests and the CUDA tests:
// element i of a uniform fill is lo + (hi - lo) * u_i with the product and the sum rounded apart (never
// one fused multiply-add), u_i = uniform01(seed, offset + i) (backends/cpu/counter_rng.h). The range
// (0.1, 0.7) is chosen so that a fused multiply-add changes about a quarter of the float64 values (hi - lo
// is not a power of two, so the product is inexact); the old test range (-1, 3) could not tell them apart.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "backends/backend.h"
#include "backends/cpu/counter_rng.h"
#include "tensor/tensor.h"

namespace nltest {

constexpr double kRandLo = 0.1, kRandHi = 0.7;

/// lo + b * u rounded as a multiply, then an add (volatile: this file may be compiled with contraction).
inline double rounded_apart(double lo, double b, double u) {
  volatile double p = b * u;
  return lo + p;
}

/// Fills `n` float64 values on `dev` through `be`, and returns how many differ from the rounded-apart
/// reference; also REQUIREs that the range tells a fused multiply-add apart (so the check can fail).
inline int64_t uniform_rounding_mismatches(nl::Backend& be, nl::Device dev, int64_t n, uint64_t seed,
                                           uint64_t offset) {
  int64_t fused_differs = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double u = nl::cpu::uniform01(seed, offset + (uint64_t)i);
    fused_differs += std::fma(kRandHi - kRandLo, u, kRandLo) != rounded_apart(kRandLo, kRandHi - kRandLo, u);
  }
  REQUIRE(fused_differs > n / 10);  // the range can catch a contraction
  nl::Tensor t = nl::Tensor::empty({n}, nl::DType::Float64, dev);
  be.random(t.desc(), false, kRandLo, kRandHi, seed, offset);
  const std::vector<double> got = t.to_vector<double>();
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i)
    bad += got[(size_t)i] != rounded_apart(kRandLo, kRandHi - kRandLo, nl::cpu::uniform01(seed, offset + (uint64_t)i));
  return bad;
}

}  // namespace nltest
