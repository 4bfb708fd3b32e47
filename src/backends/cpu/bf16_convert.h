#pragma once
// float32 <-> bfloat16 conversion on the CPU: one scalar definition (tensor/bfloat16.h) and vector
// paths that give the same bits (tests/tensor/test_bf16_convert.cpp sweeps every float32). The
// AVX512_BF16 instruction vcvtneps2bf16 treats float32 subnormal inputs as zero, so its path redoes
// those lanes with the integer rounding of the other paths.
#include <cstdint>

#include "backends/desc.h"

namespace nl::cpu {

/// Instruction paths of the conversions, slowest first.
enum class Bf16Path { Scalar, Avx2, Avx512, Avx512Bf16 };
/// "scalar", "avx2", "avx512" or "avx512_bf16".
const char* bf16_path_name(Bf16Path p);
/// True when this CPU can run `p` (Scalar always).
bool bf16_path_supported(Bf16Path p);
/// The path conversions take: AVX512_BF16 when cpu_native_bf16() (mixed_precision.h), else the widest
/// integer path the CPU has (AVX-512, AVX2, scalar).
Bf16Path bf16_convert_path();

/// out[i] = bfloat16 bits of in[i] for i < n (round to nearest even, NaN quieted, overflow to ±Inf),
/// on bf16_convert_path(). Serial; callers split large arrays across threads.
void float_to_bf16(const float* in, uint16_t* out, int64_t n);
/// The same on path `p`; throws std::invalid_argument when the CPU lacks `p`.
void float_to_bf16(Bf16Path p, const float* in, uint16_t* out, int64_t n);
/// out[i] = float32 value of bfloat16 bits in[i] (exact), on bf16_convert_path().
void bf16_to_float(const uint16_t* in, float* out, int64_t n);
/// The same on path `p`; throws std::invalid_argument when the CPU lacks `p`.
void bf16_to_float(Bf16Path p, const uint16_t* in, float* out, int64_t n);

/// CpuBackend::copy where either operand is bfloat16 (any strides; the other float32, float64,
/// int64 or bfloat16): float64 and int64 round once to bfloat16 (double_to_bf16_bits); bfloat16 to int64
/// truncates toward zero like float32 does.
void copy_bf16(const Desc& out, const Desc& in);
/// CpuBackend::fill of a bfloat16 view with `value` rounded once to nearest even.
void fill_bf16(const Desc& out, double value);

}  // namespace nl::cpu
