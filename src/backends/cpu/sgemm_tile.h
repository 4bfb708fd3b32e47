#pragma once
// The float32 register tile of the CPU's own products: 8 rows × 32 columns of C in 16 zmm accumulators,
// op(A) broadcast element by element from a row-major (or, TA, column-major) float block, B read in rows of
// 32 floats. Used by the small-product grids (small_gemm.cpp) and the blocked products of widened
// bfloat16 operands (bf16_float32_gemm.cpp). AVX-512 builds only.
#include <cstdint>

#ifdef __AVX512F__
#include <immintrin.h>

#include "backends/cpu/prefetch.h"

namespace nl::cpu::tile8 {

constexpr int kRows = 8;  // rows per register tile: 8 × 2 zmm accumulators

// The `rows` × `cols` float block at p (row stride ld) into the caches; `write` for an output.
inline void prefetch_floats(const float* p, int64_t rows, int64_t cols, int64_t ld, bool write) {
  prefetch_block(p, rows, cols * 4, ld * 4, write);
}

// Rows [i0, i0 + R) and the (up to) 32 columns of Bp's rows selected by masks m0, m1 of
// C = alpha · op(A) · Bp + beta · C, where Bp has rows of op(B) (row stride ldbp) starting at this column.
template <int R, bool TA>
inline void tile(int64_t K, const float* A, int64_t lda, int64_t i0, const float* Bp, int64_t ldbp, float* C,
                 int64_t ldc, __mmask16 m0, __mmask16 m1, float alpha, float beta) {
  // The tile's own A and C first: with the row offset folded in, GCC 12 keeps a 12-row TA tile in registers
  // (indexing A[k · lda + i0 + r] inside the loop, it spilled one of B's vectors).
  A += TA ? i0 : i0 * lda;
  C += i0 * ldc;
  __m512 c0[R], c1[R];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    c0[r] = c1[r] = _mm512_setzero_ps();
    _mm_prefetch(reinterpret_cast<const char*>(C + r * ldc), _MM_HINT_ET0);  // the rows written at the end
    _mm_prefetch(reinterpret_cast<const char*>(C + r * ldc + 16), _MM_HINT_ET0);
  }
  for (int64_t k = 0; k < K; ++k) {
    const __m512 b0 = _mm512_maskz_loadu_ps(m0, Bp + k * ldbp), b1 = _mm512_maskz_loadu_ps(m1, Bp + k * ldbp + 16);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __m512 a = _mm512_set1_ps(TA ? A[k * lda + r] : A[r * lda + k]);
      c0[r] = _mm512_fmadd_ps(a, b0, c0[r]);
      c1[r] = _mm512_fmadd_ps(a, b1, c1[r]);
    }
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    float* cr = C + r * ldc;
    __m512 x0 = _mm512_mul_ps(va, c0[r]), x1 = _mm512_mul_ps(va, c1[r]);
    if (beta != 0.f) {
      x0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, cr), x0);
      x1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, cr + 16), x1);
    }
    _mm512_mask_storeu_ps(cr, m0, x0);
    _mm512_mask_storeu_ps(cr + 16, m1, x1);
  }
}

// All M rows for one 32-column strip: full 8-row tiles, then one tile of the remaining rows.
template <bool TA, int Rows = kRows>
inline void strip(int64_t M, int64_t K, const float* A, int64_t lda, const float* Bp, int64_t ldbp, float* C,
                  int64_t ldc, __mmask16 m0, __mmask16 m1, float alpha, float beta) {
  int64_t i = 0;
  for (; i + Rows <= M; i += Rows) tile<Rows, TA>(K, A, lda, i, Bp, ldbp, C, ldc, m0, m1, alpha, beta);
  if (Rows > 8 && M - i >= 8) {
    tile<8, TA>(K, A, lda, i, Bp, ldbp, C, ldc, m0, m1, alpha, beta);
    i += 8;
  }
  switch (M - i) {
    case 7: tile<7, TA>(K, A, lda, i, Bp, ldbp, C, ldc, m0, m1, alpha, beta); break;
    case 6: tile<6, TA>(K, A, lda, i, Bp, ldbp, C, ldc, m0, m1, alpha, beta); break;
    case 5: tile<5, TA>(K, A, lda, i, Bp, ldbp, C, ldc, m0, m1, alpha, beta); break;
    case 4: tile<4, TA>(K, A, lda, i, Bp, ldbp, C, ldc, m0, m1, alpha, beta); break;
    case 3: tile<3, TA>(K, A, lda, i, Bp, ldbp, C, ldc, m0, m1, alpha, beta); break;
    case 2: tile<2, TA>(K, A, lda, i, Bp, ldbp, C, ldc, m0, m1, alpha, beta); break;
    case 1: tile<1, TA>(K, A, lda, i, Bp, ldbp, C, ldc, m0, m1, alpha, beta); break;
    default: break;
  }
}

// Columns of a stored-transposed block by gathers of 16 rows: dst[k · ldd + j] = src[j · ld + k] for j < n
// (at most 16: lanes past n neither read nor written) and k < K. The register tile reads op(B) in rows, so a
// B stored [N, K] is turned into [K, N] rows this way (small_gemm.cpp, bf16_float32_gemm.cpp).
inline void gather_columns16(const float* src, int64_t ld, int64_t n, int64_t K, float* dst, int64_t ldd) {
  const __m512i rows = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                          _mm512_set1_epi32((int)ld));
  const __mmask16 m = n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
  for (int64_t k = 0; k < K; ++k)
    _mm512_mask_storeu_ps(dst + k * ldd, m, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, rows, src + k, 4));
}

inline __mmask16 lane_mask(int64_t n) { return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1); }
}  // namespace nl::cpu::tile8
#endif
