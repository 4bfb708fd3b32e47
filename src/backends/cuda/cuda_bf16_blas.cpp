// Mixed-precision products on cuBLAS (Backend::gemm_mixed): bfloat16 operands (CUDA_R_16BF), float32
// accumulation (CUBLAS_COMPUTE_32F: tensor cores on sm_80 and later), C in float32 or bfloat16, as one
// cuBLAS call for the whole grid (gemm_grid_plan.h: one cublasGemmStridedBatchedEx when the strides fold,
// else cublasGemmBatchedEx over pointer arrays built on the device), then the bias / ReLU epilogue kernel. Row-major
// as cuda_blas.cpp: C^T = op(B)^T op(A)^T, operands and M, N swapped. alpha and beta are float32.
#include <cublas_v2.h>

#include <climits>
#include <stdexcept>
#include <string>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_bf16.h"
#include "backends/composite/scratch.h"
#include "backends/cuda/cuda_context.h"
#include "backends/cuda/cuda_gemm_grid.h"
#include "backends/gemm_check.h"
#include "backends/gemm_grid_plan.h"

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
  auto fail = [&](const char* call, cublasStatus_t st, int64_t count) {
    throw std::runtime_error(std::string(call) + " (bfloat16) failed on cuda:" + std::to_string(g.device_index) +
                             ": " + cublasGetStatusString(st) + " (M " + std::to_string(g.M) + ", N " +
                             std::to_string(g.N) + ", K " + std::to_string(g.K) + ", " + std::to_string(count) +
                             " products)");
  };
  const GemmGridPlan p =
      plan_gemm_grid(g.A.stride, g.A.outer, g.B.stride, g.B.outer, g.strideC, g.outerC, g.batch, g.outer);
  if (p.count > INT_MAX)
    throw std::invalid_argument("gemm_mixed: " + std::to_string(p.count) +
                                " products exceed cuBLAS's batch count (2^31 - 1); split the product");
  if (p.kind != GemmGridPlan::PointerArray) {
    const cublasStatus_t st = cublasGemmStridedBatchedEx(
        h, opB, opA, (int)g.N, (int)g.M, (int)g.K, &alpha, g.B.data, CUDA_R_16BF, ld(g.B.ld), p.sB, g.A.data,
        CUDA_R_16BF, ld(g.A.ld), p.sA, &beta, g.C, ct, ld(g.ldc), p.sC, (int)p.count, CUBLAS_COMPUTE_32F,
        CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS) fail("cublasGemmStridedBatchedEx", st, p.count);
  } else {
    composite::Scratch ptrs(*this, DType::Int64, g.device_index, {3 * p.count});  // A, B, C pointers
    auto** pa = static_cast<const void**>(ptrs.d().data);
    write_grid_pointers(c, const_cast<void**>(pa),
                        {{g.A.data, g.A.stride, g.A.outer, 2}, {g.B.data, g.B.stride, g.B.outer, 2},
                         {g.C, g.strideC, g.outerC, (int)csz}},
                        g.batch, p.count);
    const cublasStatus_t st = cublasGemmBatchedEx(
        h, opB, opA, (int)g.N, (int)g.M, (int)g.K, &alpha, pa + p.count, CUDA_R_16BF, ld(g.B.ld), pa, CUDA_R_16BF,
        ld(g.A.ld), &beta, const_cast<void* const*>(pa + 2 * p.count), ct, ld(g.ldc), (int)p.count,
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS) fail("cublasGemmBatchedEx", st, p.count);
  }
  mixed_gemm_epilogue(c, g);
}

}  // namespace nl::cuda
