#pragma once
// The counter-based generator of the CPU backend: number i of stream `seed` is a pure function of
// (seed, i), so a kernel can regenerate any element (random fills, the attention dropout mask) without
// storing it. SplitMix64 finaliser (Steele, Lea & Flood 2014). The CUDA backend compiles the same
// functions for the device (NL_HOST_DEVICE), so one seed gives the same numbers on every device.
#include <cstdint>

#include "backends/host_device.h"

namespace nl::cpu {

/// SplitMix64 mixing step of z.
NL_HOST_DEVICE inline uint64_t splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
/// Uniform double in (0, 1) for counter `i` of stream `seed` (53 random bits).
NL_HOST_DEVICE inline double uniform01(uint64_t seed, uint64_t i) {
  uint64_t r = splitmix64(splitmix64(seed) ^ (i * 0xD1B54A32D192ED03ull));
  return ((r >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/// a + b * u with the product and the sum each rounded to double: never one fused multiply-add, so the
/// bits do not depend on whether a compiler contracts (GCC with -march=native does unless told not to,
/// nvcc does by default). The random fills use it: uniform lo + (hi - lo) * u, normal mean + std * z.
/// On the device the rounding is explicit (__dmul_rn / __dadd_rn); on the host the caller's translation
/// unit is compiled with -ffp-contract=off (cpu_random.cpp; tests/backends/test_random_rounding.cpp
/// fails if it is not).
NL_HOST_DEVICE inline double add_mul_rounded(double a, double b, double u) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, __dmul_rn(b, u));
#else
  const double p = b * u;
  return a + p;
#endif
}

}  // namespace nl::cpu
