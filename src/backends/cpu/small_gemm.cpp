// Small batched SGEMM (small_gemm.h): an 8-row × 32-column register tile (sgemm_tile.h), the B
// operand read in rows of 32 (a transposed B is first gathered into a [K, N] scratch), the A operand
// broadcast element by element, and the next matrix's A, B and C lines prefetched before each product
// (across each thread's share of the grid, so only its first one starts cold).
#include "backends/cpu/small_gemm.h"

#include <omp.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cpu/sgemm_tile.h"
#include "backends/cpu/threads.h"

namespace nl::cpu {

#ifdef __AVX512F__
using namespace tile8;
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
        for (int64_t j = 0; j < N; j += 16) gather_columns16(bm + j * B.ld, B.ld, std::min<int64_t>(16, N - j), K, t + j, N);
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
