#pragma once
// bfloat16: the upper 16 bits of an IEEE-754 float32 (1 sign, 8 exponent, 7 mantissa bits), the storage
// type of DType::BFloat16. Conversion from float32 rounds to nearest, ties to even, as PyTorch's
// c10::BFloat16 and the AVX512_BF16 / CUDA instructions do; a NaN stays a NaN (quieted: the quiet bit
// 0x0040 is set, sign and top payload bits kept, never an infinity), values beyond the largest bfloat16
// (3.3895e38) round to ±Inf, and float32 subnormals give bfloat16 subnormals (no flush to zero).
// Widening to float32 is exact. Kept C++17-clean and header-only: CUDA sources include it.
#include <cstdint>
#include <cstring>

// Host and device functions when compiled by nvcc (the CUDA cast kernels use the same definitions).
#if defined(__CUDACC__)
#define NL_BF16_HD __host__ __device__
#else
#define NL_BF16_HD
#endif

namespace nl {

/// The bits of float32 `f`.
NL_BF16_HD inline uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}
/// The float32 with bits `u`.
NL_BF16_HD inline float float_from_bits(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

/// Bits of the bfloat16 nearest to `f` (ties to even); NaN -> quiet NaN with f's sign, ±Inf on overflow.
NL_BF16_HD inline uint16_t float_to_bf16_bits(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u);  // NaN: quiet it
  // Adding 0x7fff plus the lowest kept bit rounds the dropped 16 bits to nearest, ties to even; a carry
  // out of the mantissa bumps the exponent (and the largest finite values overflow to Inf).
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

/// The float32 holding bfloat16 `bits` exactly.
NL_BF16_HD inline float bf16_bits_to_float(uint16_t bits) { return float_from_bits((uint32_t)bits << 16); }

/// Bits of the bfloat16 nearest to `d`, rounded once (no double rounding through float32): d is
/// first narrowed to float32 rounding to odd (truncate, then set the lowest bit when inexact), which
/// float32's 16 extra mantissa bits make exact for the final round to nearest even.
NL_BF16_HD inline uint16_t double_to_bf16_bits(double d) {
  float f = (float)d;
  if (d == d && (double)f != d) {  // inexact (NaN compares unequal to itself and is left alone)
    uint32_t u = float_bits(f);
    if ((f < 0 ? -(double)f : (double)f) > (d < 0 ? -d : d)) --u;  // rounded away from zero: step back
    u |= 1u;                                                          // sticky bit: "inexact"
    f = float_from_bits(u);
  }
  return float_to_bf16_bits(f);
}

/// A bfloat16 value (storage of DType::BFloat16 tensors). Arithmetic is done in float32: convert with
/// `float(x)` and back with `bfloat16(f)`.
struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  /// Rounds `f` to nearest even (see float_to_bf16_bits).
  explicit bfloat16(float f) : bits(float_to_bf16_bits(f)) {}
  /// Rounds `d` once to nearest even (see double_to_bf16_bits).
  explicit bfloat16(double d) : bits(double_to_bf16_bits(d)) {}
  /// The value as float32 (exact).
  explicit operator float() const { return bf16_bits_to_float(bits); }
  /// The value as float64 (exact).
  explicit operator double() const { return bf16_bits_to_float(bits); }
  /// A bfloat16 with the given bit pattern.
  static bfloat16 from_bits(uint16_t b) {
    bfloat16 x;
    x.bits = b;
    return x;
  }
};
static_assert(sizeof(bfloat16) == 2, "bfloat16 must be 2 bytes");

}  // namespace nl
