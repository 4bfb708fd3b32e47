// Small batched SGEMM (small_gemm.h): the register tile of sgemm_tile.h (AVX-512: 8 rows × 32 columns;
// AVX2 + FMA: 6 × 16), the B operand read in rows of the tile's width (a transposed B is first copied into a
// [K, N] scratch), the A operand broadcast element by element, and the next matrix's A, B and C lines prefetched
// before each product (across each thread's share of the grid, so only its first one starts cold).
#include "backends/cpu/small_gemm.h"

#include <omp.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cpu/sgemm_tile.h"
#include "backends/cpu/threads.h"

namespace nl::cpu {

#if defined(__AVX512F__)
using V = regtile::Avx512;
constexpr int kRows = tile8::kRows;
#define NL_SMALL_SGEMM 1
#elif defined(__AVX2__) && defined(__FMA__)
using V = regtile::Avx2;
constexpr int kRows = 6;  // 6 × 16: 12 ymm accumulators, two registers for B, one for A
#define NL_SMALL_SGEMM 1
#endif

bool small_sgemm_fits(int64_t M, int64_t N, int64_t K) {
#ifdef NL_SMALL_SGEMM
  return M >= 1 && N >= 1 && K >= 1 && M <= 256 && N <= 256 && K <= 256 && M * N * K <= 64 * 64 * 64;
#else
  (void)M, (void)N, (void)K;
  return false;
#endif
}

#ifdef NL_SMALL_SGEMM
namespace {
#ifndef __AVX512F__
// dst[c · ldd + r] = src[r · ld + c] for an 8 × 8 float block, in registers (unpack, shuffle, lane swap).
inline void transpose8x8(const float* src, int64_t ld, float* dst, int64_t ldd) {
  __m256 r[8], u[8], v[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * ld);
  for (int i = 0; i < 8; i += 2) {
    u[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    u[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4)
    for (int h = 0; h < 2; ++h) {
      v[i + h] = _mm256_shuffle_ps(u[i + h], u[i + h + 2], _MM_SHUFFLE(1, 0, 1, 0));
      v[i + h + 2] = _mm256_shuffle_ps(u[i + h], u[i + h + 2], _MM_SHUFFLE(3, 2, 3, 2));
    }
  // v[0..3]: columns 0, 4, 1, 5 ... of rows 0-3 in each 128-bit lane; v[4..7] the same for rows 4-7.
  const int order[4] = {0, 2, 1, 3};  // v index holding columns (c, c + 4) for c = 0..3
  for (int c = 0; c < 4; ++c) {
    _mm256_storeu_ps(dst + c * ldd, _mm256_permute2f128_ps(v[order[c]], v[order[c] + 4], 0x20));
    _mm256_storeu_ps(dst + (c + 4) * ldd, _mm256_permute2f128_ps(v[order[c]], v[order[c] + 4], 0x31));
  }
}
#endif

// op(B) = the stored [N, K] block's transpose, as [K, N] rows (ld N) that the register tile reads.
void transpose_b(const float* b, int64_t ldb, int64_t N, int64_t K, float* t) {
#ifdef __AVX512F__
  for (int64_t j = 0; j < N; j += 16) tile8::gather_columns16(b + j * ldb, ldb, std::min<int64_t>(16, N - j), K, t + j, N);
#else
  int64_t j = 0;
  for (; j + 8 <= N; j += 8) {
    int64_t k = 0;
    for (; k + 8 <= K; k += 8) transpose8x8(b + j * ldb + k, ldb, t + k * N + j, N);
    for (; k < K; ++k)
      for (int64_t jj = j; jj < j + 8; ++jj) t[k * N + jj] = b[jj * ldb + k];
  }
  for (; j < N; ++j)
    for (int64_t k = 0; k < K; ++k) t[k * N + j] = b[j * ldb + k];
#endif
}
}  // namespace
#endif

void small_sgemm_grid(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, GridOperand A, GridOperand B,
                      float beta, float* C, int64_t ldc, int64_t strideC, int64_t outerC, int64_t batch, int64_t outer) {
  if (!small_sgemm_fits(M, N, K))
    throw std::logic_error("small_sgemm_grid: " + std::to_string(M) + " x " + std::to_string(N) + " x " +
                           std::to_string(K) + " is not a small product on this build (check small_sgemm_fits)");
#ifdef NL_SMALL_SGEMM
  constexpr int64_t kStrip = 2 * V::kLanes;  // columns per register tile
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
      if (tb) {
        transpose_b(bm, B.ld, N, K, scratch.data());
        Bp = scratch.data(), ldbp = N;
      }
      for (int64_t j = 0; j < N; j += kStrip) {
        const V::Mask m0 = V::mask(N - j), m1 = V::mask(N - j - V::kLanes);
        if (ta)
          regtile::strip<V, true, kRows>(M, K, a, A.ld, Bp + j, ldbp, c + j, ldc, m0, m1, alpha, beta);
        else
          regtile::strip<V, false, kRows>(M, K, a, A.ld, Bp + j, ldbp, c + j, ldc, m0, m1, alpha, beta);
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
