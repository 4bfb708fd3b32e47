#pragma once
// The counter-based generator of the CPU backend: number i of stream `seed` is a pure function of
// (seed, i), so a kernel can regenerate any element (random fills, the attention dropout mask) without
// storing it. SplitMix64 finaliser (Steele, Lea & Flood 2014). The CUDA backend compiles the same
// functions for the device (NL_HOST_DEVICE), so one seed gives the same numbers on every device.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "backends/host_device.h"

namespace nl::cpu {

/// SplitMix64 mixing step of z.
NL_HOST_DEVICE inline uint64_t splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
/// The multiplier of the counter in counter_word.
inline constexpr uint64_t kCounterMul = 0xD1B54A32D192ED03ull;
/// counter_word(key, i) for the product m = i * kCounterMul (mod 2^64). A loop over consecutive counters
/// keeps m and adds kCounterMul per element (`#pragma omp simd linear(m : kCounterMul)`): the same words
/// with one 64-bit multiply fewer per element (dropout 0.176 -> 0.146 ms per 512 Ki floats, Zen 4).
NL_HOST_DEVICE inline uint64_t counter_word_at(uint64_t key, uint64_t m) { return splitmix64(key ^ m); }
/// The 64-bit word of counter `i` in the stream whose key is splitmix64(seed).
NL_HOST_DEVICE inline uint64_t counter_word(uint64_t key, uint64_t i) { return counter_word_at(key, i * kCounterMul); }
/// uniform01's value for the word's top 53 bits k: (k + 1/2) / 2^53, rounded to double.
NL_HOST_DEVICE inline double uniform01_of_bits(uint64_t k) { return (k + 0.5) * (1.0 / 9007199254740992.0); }
/// Uniform double in (0, 1) for counter `i` of stream `seed` (53 random bits).
NL_HOST_DEVICE inline double uniform01(uint64_t seed, uint64_t i) {
  return uniform01_of_bits(counter_word(splitmix64(seed), i) >> 11);
}

/// Dropout's keep test `T(uniform01(seed, i)) > T(p)` on integers: uniform01 is non-decreasing in the
/// word's top 53 bits (and so is rounding it to T), so the test holds exactly when the word is at least
/// `threshold`, the smallest word that passes (found once, by bisection over the 2^53 values). The same
/// mask as the floating compare, bit for bit (tests/backends/test_counter_rng.cpp), without the
/// convert, multiply and compare in double per element.
struct KeepTest {
  uint64_t key = 0;        ///< splitmix64(seed)
  uint64_t threshold = 0;  ///< element i kept when counter_word(key, i) >= threshold
  bool none = false;       ///< no word passes (p rounds to 1 in T): every element dropped
  /// The test for `seed` and drop probability p in [0, 1), compared in T (float or double) as the
  /// kernel's floating form does. Throws std::invalid_argument for p outside [0, 1).
  template <typename T>
  static KeepTest make(uint64_t seed, double p);
  /// True when element `i` is kept.
  NL_HOST_DEVICE bool keep(uint64_t i) const { return !none && counter_word(key, i) >= threshold; }
  /// The multiplier of a kept element: `scale`, or 0 when none is kept. A vectorised kernel copies
  /// key and threshold to locals and tests `counter_word(key, i) >= threshold` (no branch; a member
  /// call inside `omp simd` made GCC gather the fields per lane), multiplying by this.
  template <typename T>
  NL_HOST_DEVICE T kept_scale(T scale) const { return none ? T(0) : scale; }
};

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

template <typename T>
KeepTest KeepTest::make(uint64_t seed, double p) {
  if (!(p >= 0.0 && p < 1.0)) throw std::invalid_argument("dropout: p must be in [0, 1), got " + std::to_string(p));
  auto passes = [&](uint64_t k) { return T(uniform01_of_bits(k)) > T(p); };
  uint64_t lo = 0, hi = (1ull << 53) - 1;  // the largest value, 1 after rounding
  if (!passes(hi)) return {splitmix64(seed), ~0ull, true};  // T(p) == 1: p within T's rounding of 1
  while (lo < hi) {  // the smallest k in [lo, hi] that passes
    const uint64_t mid = lo + (hi - lo) / 2;
    if (passes(mid)) hi = mid;
    else lo = mid + 1;
  }
  return {splitmix64(seed), lo << 11, false};
}

}  // namespace nl::cpu
