// Matrix products on cuBLAS: one cublasGemmStridedBatchedEx per call (a single product is batch 1),
// on the device's stream. normlab is row-major and cuBLAS column-major, so C = op(A) op(B) is computed
// as C^T = op(B)^T op(A)^T: operands swapped, M and N swapped. FP32 products use CUBLAS_COMPUTE_32F
// (no TF32, so float32 results stay within 1e-6 of the CPU), FP64 CUBLAS_COMPUTE_64F.
#include <cublas_v2.h>

#include <climits>
#include <stdexcept>
#include <string>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_context.h"
#include "backends/gemm_check.h"

namespace nl::cuda {

void CudaBackend::gemm(DType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const void* A,
                       int64_t lda, int64_t sA, const void* B, int64_t ldb, int64_t sB, double beta, void* C,
                       int64_t ldc, int64_t sC, int64_t batch, int dev) {
  check_gemm_args(t, M, N, K, lda, ldb, ldc);
  if (batch < 0 || batch > INT_MAX)
    throw std::invalid_argument("gemm: batch = " + std::to_string(batch) +
                                " is outside [0, 2^31 - 1], the range of cuBLAS's batch count; split the product");
  if (M == 0 || N == 0 || batch == 0) return;
  DeviceContext& c = context(dev);
  auto h = static_cast<cublasHandle_t>(c.blas);
  const cublasOperation_t opA = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opB = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const bool f32 = t == DType::Float32;
  const float af = (float)alpha, bf = (float)beta;
  const cudaDataType dt = f32 ? CUDA_R_32F : CUDA_R_64F;
  const void* pa = f32 ? static_cast<const void*>(&af) : static_cast<const void*>(&alpha);
  const void* pb = f32 ? static_cast<const void*>(&bf) : static_cast<const void*>(&beta);
  // cuBLAS rejects a leading dimension < 1 even when the matrix is empty (K == 0).
  auto ld = [](int64_t v) { return (int)(v < 1 ? 1 : v); };
  const cublasStatus_t st = cublasGemmStridedBatchedEx(
      h, opB, opA, (int)N, (int)M, (int)K, pa, B, dt, ld(ldb), sB, A, dt, ld(lda), sA, pb, C, dt, ld(ldc), sC,
      (int)batch, f32 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
  if (st != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cublasGemmStridedBatchedEx failed on cuda:") + std::to_string(dev) + ": " +
                             cublasGetStatusString(st) + " (M " + std::to_string(M) + ", N " + std::to_string(N) +
                             ", K " + std::to_string(K) + ", batch " + std::to_string(batch) + ")");
}

}  // namespace nl::cuda
