// Mixed-precision products on cuBLAS (Backend::gemm_mixed): bfloat16 operands (CUDA_R_16BF), float32
// accumulation (CUBLAS_COMPUTE_32F: tensor cores on sm_80 and later), C in float32 or bfloat16, one
// cublasGemmStridedBatchedEx per outer step of the grid, then the bias / ReLU epilogue kernel. Row-major
// as cuda_blas.cpp: C^T = op(B)^T op(A)^T, operands and M, N swapped. alpha and beta are float32.
#include <cublas_v2.h>

#include <stdexcept>
#include <string>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_bf16.h"
#include "backends/cuda/cuda_context.h"
#include "backends/gemm_check.h"

namespace nl::cuda {

void CudaBackend::gemm_mixed(const MixedGemm& g) {
  check_mixed_gemm_args(g);
  if (g.M == 0 || g.N == 0 || g.batch == 0 || g.outer == 0) return;
  DeviceContext& c = context(g.device_index);
  auto h = static_cast<cublasHandle_t>(c.blas);
  const cublasOperation_t opA = g.A.trans ? CUBLAS_OP_T : CUBLAS_OP_N, opB = g.B.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  const float alpha = (float)g.alpha, beta = (float)g.beta;
  const cudaDataType ct = g.c == DType::BFloat16 ? CUDA_R_16BF : CUDA_R_32F;
  const size_t csz = g.c == DType::BFloat16 ? 2 : 4;
  auto ld = [](int64_t v) { return (int)(v < 1 ? 1 : v); };  // cuBLAS rejects ld < 1 even when K == 0
  for (int64_t o = 0; o < g.outer; ++o) {
    const void* A = static_cast<const char*>(g.A.data) + o * g.A.outer * 2;
    const void* B = static_cast<const char*>(g.B.data) + o * g.B.outer * 2;
    void* C = static_cast<char*>(g.C) + o * g.outerC * csz;
    const cublasStatus_t st = cublasGemmStridedBatchedEx(
        h, opB, opA, (int)g.N, (int)g.M, (int)g.K, &alpha, B, CUDA_R_16BF, ld(g.B.ld), g.B.stride, A, CUDA_R_16BF,
        ld(g.A.ld), g.A.stride, &beta, C, ct, ld(g.ldc), g.strideC, (int)g.batch, CUBLAS_COMPUTE_32F,
        CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS)
      throw std::runtime_error(std::string("cublasGemmStridedBatchedEx (bfloat16) failed on cuda:") +
                               std::to_string(g.device_index) + ": " + cublasGetStatusString(st) + " (M " +
                               std::to_string(g.M) + ", N " + std::to_string(g.N) + ", K " + std::to_string(g.K) +
                               ", batch " + std::to_string(g.batch) + ")");
  }
  mixed_gemm_epilogue(c, g);
}

}  // namespace nl::cuda
