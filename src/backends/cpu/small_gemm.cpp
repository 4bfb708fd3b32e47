// Small batched SGEMM (small_gemm.h): an 8-row × 32-column register tile (16 zmm accumulators), the B
// operand read in rows of 32 (a transposed B is first gathered into a [K, N] scratch), the A operand
// broadcast element by element, and the next matrix's A, B and C lines prefetched before each product
// (across each thread's share of the grid, so only its first one starts cold).
#include "backends/cpu/small_gemm.h"

#include <omp.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cpu/prefetch.h"
#include "backends/cpu/threads.h"
#ifdef __AVX512F__
#include <immintrin.h>
#endif

namespace nl::cpu {

#ifdef __AVX512F__
namespace {
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
  __m512 c0[R], c1[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) c0[r] = c1[r] = _mm512_setzero_ps();
  for (int64_t k = 0; k < K; ++k) {
    const __m512 b0 = _mm512_maskz_loadu_ps(m0, Bp + k * ldbp), b1 = _mm512_maskz_loadu_ps(m1, Bp + k * ldbp + 16);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 a = _mm512_set1_ps(TA ? A[k * lda + i0 + r] : A[(i0 + r) * lda + k]);
      c0[r] = _mm512_fmadd_ps(a, b0, c0[r]);
      c1[r] = _mm512_fmadd_ps(a, b1, c1[r]);
    }
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    float* cr = C + (i0 + r) * ldc;
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
template <bool TA>
void strip(int64_t M, int64_t K, const float* A, int64_t lda, const float* Bp, int64_t ldbp, float* C, int64_t ldc,
           __mmask16 m0, __mmask16 m1, float alpha, float beta) {
  int64_t i = 0;
  for (; i + kRows <= M; i += kRows) tile<kRows, TA>(K, A, lda, i, Bp, ldbp, C, ldc, m0, m1, alpha, beta);
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

__mmask16 lane_mask(int64_t n) { return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1); }
}  // namespace
#endif

bool small_sgemm_fits(int64_t M, int64_t N, int64_t K) {
#ifdef __AVX512F__
  return M >= 1 && N >= 1 && K >= 1 && M <= 256 && N <= 256 && K <= 256 && M * N * K <= 64 * 64 * 64;
#else
  (void)M, (void)N, (void)K;
  return false;
#endif
}

void small_sgemm_grid(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, GridOperand A, GridOperand B,
                      float beta, float* C, int64_t ldc, int64_t strideC, int64_t outerC, int64_t batch, int64_t outer) {
  if (!small_sgemm_fits(M, N, K))
    throw std::logic_error("small_sgemm_grid: " + std::to_string(M) + " x " + std::to_string(N) + " x " +
                           std::to_string(K) + " is not a small product on this build (check small_sgemm_fits)");
#ifdef __AVX512F__
  // B's rows j0 + [0, 16) for gathering one column of a transposed B
  const __m512i rows = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                          _mm512_set1_epi32((int)B.ld));
  const int64_t total = outer * batch;
  // Products [n0, n1) of the grid, in order, on one thread.
  auto run = [&](int64_t n0, int64_t n1) {
    thread_local std::vector<float> scratch;  // op(B) as [K, N] when B is stored transposed
    if (tb && scratch.size() < (size_t)(K * N)) scratch.resize((size_t)(K * N));
    for (int64_t n = n0; n < n1; ++n) {
      const int64_t o = n / batch, b = n % batch;
      const float* a = A.p + o * A.outer + b * A.stride;
      const float* bm = B.p + o * B.outer + b * B.stride;
      float* c = C + o * outerC + b * strideC;
      if (n + 1 < n1) {  // the next product's operands, while this one computes
        const int64_t o1 = (n + 1) / batch, b1 = (n + 1) % batch;
        prefetch_floats(A.p + o1 * A.outer + b1 * A.stride, ta ? K : M, ta ? M : K, A.ld, false);
        prefetch_floats(B.p + o1 * B.outer + b1 * B.stride, tb ? N : K, tb ? K : N, B.ld, false);
        prefetch_floats(C + o1 * outerC + b1 * strideC, M, N, ldc, true);
      }
      const float* Bp = bm;
      int64_t ldbp = B.ld;
      if (tb) {  // column k of the stored [N, K] block, 16 rows per gather
        float* t = scratch.data();
        for (int64_t j = 0; j < N; j += 16) {
          const __mmask16 m = lane_mask(N - j);
          const float* col = bm + j * B.ld;
          for (int64_t k = 0; k < K; ++k)
            _mm512_mask_storeu_ps(t + k * N + j, m, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, rows, col + k, 4));
        }
        Bp = t, ldbp = N;
      }
      for (int64_t j = 0; j < N; j += 32) {
        const __mmask16 m0 = lane_mask(N - j), m1 = lane_mask(N - j - 16);
        if (ta)
          strip<true>(M, K, a, A.ld, Bp + j, ldbp, c + j, ldc, m0, m1, alpha, beta);
        else
          strip<false>(M, K, a, A.ld, Bp + j, ldbp, c + j, ldc, m0, m1, alpha, beta);
      }
    }
  };
  // One contiguous share of the grid per thread (each product on one thread: the result does not depend
  // on the thread count), threads only when there are at least kParallelGrain multiply-adds per thread.
  const int nt = (int)std::min<int64_t>(std::max(1, omp_get_max_threads()), total * M * N * K / (kParallelGrain * 32));
  if (nt <= 1) {
    run(0, total);
  } else {
#pragma omp parallel for schedule(static, 1) num_threads(nt)
    for (int t = 0; t < nt; ++t) run(total * t / nt, total * (t + 1) / nt);
  }
#else
  (void)ta, (void)tb, (void)alpha, (void)A, (void)B, (void)beta, (void)C, (void)ldc, (void)strideC, (void)outerC,
      (void)batch, (void)outer;
#endif
}

}  // namespace nl::cpu
