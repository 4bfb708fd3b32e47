#pragma once
// The float32 register tile of the CPU's own products: R rows × two vectors of C in 2R accumulators, op(A)
// broadcast element by element from a row-major (or, TA, column-major) float block, B read in rows of two
// vectors. One template over the vector ISA (regtile::Avx512, regtile::Avx2):
//   tile8 (AVX-512): 8 × 32 in 16 zmm accumulators (12 × 32 for the blocked products of widened bfloat16
//                    operands, bf16_float32_gemm.cpp);
//   tile6 (AVX2 + FMA builds without AVX-512): 6 × 16 in 12 of the 16 ymm registers (two for B, one for A).
// Each output is one float FMA chain over k in order, then alpha · acc (+ beta · C): a row's bits do not
// depend on M, on the other rows or on the ISA's column edges. Used by the small-product grids
// (small_gemm.cpp) and the blocked bfloat16 products (AVX-512 only).
#include <algorithm>
#include <cstdint>

#include "backends/cpu/prefetch.h"
#include "backends/cpu/vec_math.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace nl::cpu {

// The `rows` × `cols` float block at p (row stride ld) into the caches; `write` for an output.
inline void prefetch_floats(const float* p, int64_t rows, int64_t cols, int64_t ld, bool write) {
  prefetch_block(p, rows, cols * 4, ld * 4, write);
}

namespace regtile {

#ifdef __AVX512F__
/// 16 float lanes; a mask register selects a column edge's lanes, at the cost of a plain load or store.
struct Avx512 {
  using Vec = __m512;
  using Mask = __mmask16;
  static constexpr int kLanes = 16;
  static constexpr bool kCheapMasks = true;
  static Vec zero() { return _mm512_setzero_ps(); }
  static Vec set1(float x) { return _mm512_set1_ps(x); }
  static Vec mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
  static Vec fmadd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  static Vec load(Mask m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
  static void store(float* p, Mask m, Vec v) { _mm512_mask_storeu_ps(p, m, v); }
  static Vec loadu(const float* p) { return _mm512_loadu_ps(p); }
  static void storeu(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static Mask mask(int64_t n) { return n >= 16 ? (Mask)0xFFFF : n <= 0 ? (Mask)0 : (Mask)((1u << n) - 1); }
  static bool full(Mask m) { return m == (Mask)0xFFFF; }
};
#endif

/// 8 float lanes; a column edge by vmaskmovps, which costs more than a plain load or store (on Zen 3 the
/// masked store much more), so a strip whose columns are all present runs without masks.
struct Avx2 {
  using Vec = __m256;
  using Mask = __m256i;  // lane i present when its word is all ones
  static constexpr int kLanes = 8;
  static constexpr bool kCheapMasks = false;
  static Vec zero() { return _mm256_setzero_ps(); }
  static Vec set1(float x) { return _mm256_set1_ps(x); }
  static Vec mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
  static Vec fmadd(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  static Vec load(Mask m, const float* p) { return _mm256_maskload_ps(p, m); }  // absent lanes: 0, not read
  static void store(float* p, Mask m, Vec v) { _mm256_maskstore_ps(p, m, v); }
  static Vec loadu(const float* p) { return _mm256_loadu_ps(p); }
  static void storeu(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  static Mask mask(int64_t n) { return lanes8(n); }
  static bool full(Mask m) { return _mm256_movemask_ps(_mm256_castsi256_ps(m)) == 0xFF; }
};

// Rows [i0, i0 + R) and the (up to) 2 · kLanes columns of Bp's rows selected by masks m0, m1 of
// C = alpha · op(A) · Bp + beta · C, where Bp has rows of op(B) (row stride ldbp) starting at this column.
// Full: every column present (the masks are not used).
template <class V, int R, bool TA, bool Full>
inline void tile(int64_t K, const float* A, int64_t lda, int64_t i0, const float* Bp, int64_t ldbp, float* C,
                 int64_t ldc, typename V::Mask m0, typename V::Mask m1, float alpha, float beta) {
  constexpr int L = V::kLanes;
  auto ld = [&](typename V::Mask m, const float* p) { return Full ? V::loadu(p) : V::load(m, p); };
  auto st = [&](float* p, typename V::Mask m, typename V::Vec v) { Full ? V::storeu(p, v) : V::store(p, m, v); };
  // The tile's own A and C first: with the row offset folded in, GCC 12 keeps a 12-row TA tile in registers
  // (indexing A[k · lda + i0 + r] inside the loop, it spilled one of B's vectors).
  A += TA ? i0 : i0 * lda;
  C += i0 * ldc;
  typename V::Vec c0[R], c1[R];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    c0[r] = c1[r] = V::zero();
    _mm_prefetch(reinterpret_cast<const char*>(C + r * ldc), _MM_HINT_ET0);  // the rows written at the end
    _mm_prefetch(reinterpret_cast<const char*>(C + r * ldc + 2 * L - 1), _MM_HINT_ET0);
  }
  for (int64_t k = 0; k < K; ++k) {
    const typename V::Vec b0 = ld(m0, Bp + k * ldbp), b1 = ld(m1, Bp + k * ldbp + L);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const typename V::Vec a = V::set1(TA ? A[k * lda + r] : A[r * lda + k]);
      c0[r] = V::fmadd(a, b0, c0[r]);
      c1[r] = V::fmadd(a, b1, c1[r]);
    }
  }
  const typename V::Vec va = V::set1(alpha), vb = V::set1(beta);
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    float* cr = C + r * ldc;
    typename V::Vec x0 = V::mul(va, c0[r]), x1 = V::mul(va, c1[r]);
    if (beta != 0.f) {
      x0 = V::fmadd(vb, ld(m0, cr), x0);
      x1 = V::fmadd(vb, ld(m1, cr + L), x1);
    }
    st(cr, m0, x0);
    st(cr + L, m1, x1);
  }
}

// The last `rem` (≤ R) rows of a strip, from row i, in one tile of exactly rem rows.
template <class V, bool TA, bool Full, int R>
inline void rest(int64_t rem, int64_t i, int64_t K, const float* A, int64_t lda, const float* Bp, int64_t ldbp,
                 float* C, int64_t ldc, typename V::Mask m0, typename V::Mask m1, float alpha, float beta) {
  if constexpr (R > 0) {
    if (rem == R) return tile<V, R, TA, Full>(K, A, lda, i, Bp, ldbp, C, ldc, m0, m1, alpha, beta);
    rest<V, TA, Full, R - 1>(rem, i, K, A, lda, Bp, ldbp, C, ldc, m0, m1, alpha, beta);
  }
}

template <class V, bool TA, int Rows, bool Full>
inline void strip_rows(int64_t M, int64_t K, const float* A, int64_t lda, const float* Bp, int64_t ldbp, float* C,
                       int64_t ldc, typename V::Mask m0, typename V::Mask m1, float alpha, float beta) {
  int64_t i = 0;
  for (; i + Rows <= M; i += Rows) tile<V, Rows, TA, Full>(K, A, lda, i, Bp, ldbp, C, ldc, m0, m1, alpha, beta);
  if constexpr (Rows > 8) {
    if (M - i >= 8) {
      tile<V, 8, TA, Full>(K, A, lda, i, Bp, ldbp, C, ldc, m0, m1, alpha, beta);
      i += 8;
    }
  }
  rest<V, TA, Full, std::min(Rows - 1, 7)>(M - i, i, K, A, lda, Bp, ldbp, C, ldc, m0, m1, alpha, beta);
}

/// All M rows for one strip of 2 · V::kLanes columns (masks m0, m1 select the present ones): full tiles
/// of Rows rows, then (Rows > 8) one of 8, then one tile of the remaining rows.
template <class V, bool TA, int Rows>
inline void strip(int64_t M, int64_t K, const float* A, int64_t lda, const float* Bp, int64_t ldbp, float* C,
                  int64_t ldc, typename V::Mask m0, typename V::Mask m1, float alpha, float beta) {
  if constexpr (!V::kCheapMasks) {
    if (V::full(m0) && V::full(m1))
      return strip_rows<V, TA, Rows, true>(M, K, A, lda, Bp, ldbp, C, ldc, m0, m1, alpha, beta);
  }
  strip_rows<V, TA, Rows, false>(M, K, A, lda, Bp, ldbp, C, ldc, m0, m1, alpha, beta);
}

}  // namespace regtile

#ifdef __AVX512F__
namespace tile8 {

constexpr int kRows = 8;  // rows per register tile: 8 × 2 zmm accumulators

inline __mmask16 lane_mask(int64_t n) { return regtile::Avx512::mask(n); }

/// regtile::strip on AVX-512 (32 columns a strip).
template <bool TA, int Rows = kRows>
inline void strip(int64_t M, int64_t K, const float* A, int64_t lda, const float* Bp, int64_t ldbp, float* C,
                  int64_t ldc, __mmask16 m0, __mmask16 m1, float alpha, float beta) {
  regtile::strip<regtile::Avx512, TA, Rows>(M, K, A, lda, Bp, ldbp, C, ldc, m0, m1, alpha, beta);
}

// Columns of a stored-transposed block by gathers of 16 rows: dst[k · ldd + j] = src[j · ld + k] for j < n
// (at most 16: lanes past n neither read nor written) and k < K. The register tile reads op(B) in rows, so a
// B stored [N, K] is turned into [K, N] rows this way (small_gemm.cpp, bf16_float32_gemm.cpp).
inline void gather_columns16(const float* src, int64_t ld, int64_t n, int64_t K, float* dst, int64_t ldd) {
  const __m512i rows = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                          _mm512_set1_epi32((int)ld));
  const __mmask16 m = lane_mask(n);
  for (int64_t k = 0; k < K; ++k)
    _mm512_mask_storeu_ps(dst + k * ldd, m, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, rows, src + k, 4));
}

}  // namespace tile8
#endif

}  // namespace nl::cpu
#endif
