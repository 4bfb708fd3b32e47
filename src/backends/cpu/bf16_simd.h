#pragma once
// float32 -> bfloat16 rounding of 16 lanes, for the conversion kernels (cpu_bf16.cpp) and the kernels that
// round their own float32 results (small_bf16_gemm.cpp): the bits of float_to_bf16_bits (tensor/bfloat16.h).
// Inline with target attributes: callable only from code compiled for (or checked at run time to have)
// those instruction sets.
#include <immintrin.h>

#include <cstdint>

#include "tensor/bfloat16.h"

namespace nl::cpu {

/// 16 float32 lanes rounded to bfloat16 bits (nearest even, NaN quieted, overflow to ±Inf) with integer
/// arithmetic: AVX-512 F/BW/VL.
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m256i round_avx512(__m512 v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                                 _mm512_set1_epi32(0x7f800000));
  r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(u, _mm512_set1_epi32(0x00400000)));
  return _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16));
}

/// The same with vcvtneps2bf16 (AVX512_BF16), whose subnormal inputs (it flushes them to zero) are redone
/// by round_avx512.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) inline __m256i round_avx512bf16(__m512 v) {
  __m256i r = (__m256i)_mm512_cvtneps_pbh(v);
  const __m512i u = _mm512_castps_si512(v);
  const __mmask16 sub = _mm512_testn_epi32_mask(u, _mm512_set1_epi32(0x7f800000)) &
                        _mm512_test_epi32_mask(u, _mm512_set1_epi32(0x007fffff));
  if (__builtin_expect(sub != 0, 0)) r = _mm256_mask_mov_epi16(r, sub, round_avx512(v));
  return r;
}

/// 32 float32 lanes (lo: elements 0-15, hi: 16-31) rounded to bfloat16 bits in one vcvtne2ps2bf16, the
/// bits of round_avx512bf16 on each half. Inside a kernel's arithmetic loop this costs a fraction of two
/// vcvtneps2bf16 (Zen 4: a LayerNorm-like row loop rounded 16 lanes at a time took 0.075 ms more per
/// 512 Ki elements, 32 at a time 0.021 ms); a subnormal lane (flushed by the instruction) sends the pair to
/// the integer rounding (vfpclassps finds them).
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16"))) inline __m512i round32_avx512bf16(__m512 lo,
                                                                                                         __m512 hi) {
  if (__builtin_expect((_mm512_fpclass_ps_mask(lo, 0x20) | _mm512_fpclass_ps_mask(hi, 0x20)) != 0, 0))
    return _mm512_inserti64x4(_mm512_castsi256_si512(round_avx512(lo)), round_avx512(hi), 1);
  return (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
}

/// in[i] rounded to bfloat16 bits into out[i] for i < n (the bits of float_to_bf16_bits), inline: for the
/// short rows a kernel rounds itself (the attention's 32-key rows), where a dispatched conversion call would
/// cost more than the row. 16 lanes at a time when the build targets AVX-512 (vcvtneps2bf16 with AVX512_BF16,
/// round_avx512bf16; else round_avx512), else one at a time.
inline void round_row_bf16(const float* in, uint16_t* out, int64_t n) {
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = (__mmask16)(n - i >= 16 ? 0xFFFFu : (1u << (n - i)) - 1);
#if defined(__AVX512BF16__)
    _mm256_mask_storeu_epi16(out + i, m, round_avx512bf16(_mm512_maskz_loadu_ps(m, in + i)));
#else
    _mm256_mask_storeu_epi16(out + i, m, round_avx512(_mm512_maskz_loadu_ps(m, in + i)));
#endif
  }
#else
  for (int64_t i = 0; i < n; ++i) out[i] = float_to_bf16_bits(in[i]);
#endif
}

}  // namespace nl::cpu
