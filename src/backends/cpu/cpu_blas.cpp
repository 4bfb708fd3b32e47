// Matrix products on OpenBLAS. Row-major (s/d)gemm; batched products loop over the batch and call
// BLAS once per matrix (BLAS threads do the parallel work; never called inside an OpenMP region).
// Small float products (the attention's per-head ones) go to small_gemm.h's kernel instead.
#include <cblas.h>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/small_gemm.h"
#include "backends/gemm_check.h"
#include "backends/profiler.h"

namespace nl {
namespace {
// Runs an outer × batch grid of float products on small_gemm.h's kernel when they are small enough
// (timed and counted like any GEMM); false, doing nothing, when OpenBLAS should take them.
bool small_products(DType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const void* A,
                    int64_t lda, int64_t sA, int64_t oA, const void* B, int64_t ldb, int64_t sB, int64_t oB, double beta,
                    void* C, int64_t ldc, int64_t sC, int64_t oC, int64_t batch, int64_t outer) {
  if (t != DType::Float32 || !cpu::small_sgemm_fits(M, N, K)) return false;
  prof::Scope prof_scope(prof::Cat::Gemm);
  check_gemm_args(t, M, N, K, lda, ldb, ldc);
  prof::add_gemm_flops(2.0 * (double)M * (double)N * (double)K * (double)(batch * outer));
  cpu::small_sgemm_grid(ta, tb, M, N, K, (float)alpha, {static_cast<const float*>(A), lda, sA, oA},
                        {static_cast<const float*>(B), ldb, sB, oB}, (float)beta, static_cast<float*>(C), ldc, sC, oC,
                        batch, outer);
  return true;
}
}  // namespace

void CpuBackend::gemm(DType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const void* A,
                      int64_t lda, int64_t sA, const void* B, int64_t ldb, int64_t sB, double beta, void* C,
                      int64_t ldc, int64_t sC, int64_t batch, int) {
  if (small_products(t, ta, tb, M, N, K, alpha, A, lda, sA, 0, B, ldb, sB, 0, beta, C, ldc, sC, 0, batch, 1)) return;
  prof::Scope prof_scope(prof::Cat::Gemm);
  check_gemm_args(t, M, N, K, lda, ldb, ldc);
  prof::add_gemm_flops(2.0 * (double)M * (double)N * (double)K * (double)batch);
  const auto TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
  for (int64_t b = 0; b < batch; ++b) {
    if (t == DType::Float32) {
      cblas_sgemm(CblasRowMajor, TA, TB, (int)M, (int)N, (int)K, (float)alpha, static_cast<const float*>(A) + b * sA,
                  (int)lda, static_cast<const float*>(B) + b * sB, (int)ldb, (float)beta,
                  static_cast<float*>(C) + b * sC, (int)ldc);
    } else if (t == DType::Float64) {
      cblas_dgemm(CblasRowMajor, TA, TB, (int)M, (int)N, (int)K, alpha, static_cast<const double*>(A) + b * sA,
                  (int)lda, static_cast<const double*>(B) + b * sB, (int)ldb, beta,
                  static_cast<double*>(C) + b * sC, (int)ldc);
    }
  }
}

void CpuBackend::gemm_grid(DType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const void* A,
                           int64_t lda, int64_t sA, int64_t oA, const void* B, int64_t ldb, int64_t sB, int64_t oB,
                           double beta, void* C, int64_t ldc, int64_t sC, int64_t oC, int64_t batch, int64_t outer,
                           int device_index) {
  if (!small_products(t, ta, tb, M, N, K, alpha, A, lda, sA, oA, B, ldb, sB, oB, beta, C, ldc, sC, oC, batch, outer))
    Backend::gemm_grid(t, ta, tb, M, N, K, alpha, A, lda, sA, oA, B, ldb, sB, oB, beta, C, ldc, sC, oC, batch, outer,
                       device_index);
}

}  // namespace nl
