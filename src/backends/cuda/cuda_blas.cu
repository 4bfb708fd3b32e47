// Matrix products on cuBLAS: one cublasGemmStridedBatchedEx per call (a single product is batch 1),
// on the device's stream; a gemm_grid (outer x batch products, e.g. the heads of every sequence of
// attention) is one strided-batched call when its strides fold into one (gemm_grid_plan.h), else one
// cublasGemmBatchedEx over pointer arrays built on the device (no host round trip). normlab is row-major and cuBLAS column-major, so C = op(A) op(B) is computed
// as C^T = op(B)^T op(A)^T: operands swapped, M and N swapped. FP32 products use CUBLAS_COMPUTE_32F
// (no TF32, so float32 results stay within 1e-6 of the CPU) unless set_allow_tf32(true)
// (backends/mixed_precision.h) allows CUBLAS_COMPUTE_32F_FAST_TF32; FP64 CUBLAS_COMPUTE_64F.
#include <cublas_v2.h>

#include <climits>
#include <stdexcept>
#include <string>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_context.h"
#include "backends/cuda/cuda_gemm_grid.h"
#include "backends/composite/scratch.h"
#include "backends/cuda/cuda_launch.cuh"
#include "backends/gemm_check.h"
#include "backends/gemm_grid_plan.h"

namespace nl::cuda {
namespace {
struct GridOps {  // the three operands by value, for the kernel's parameters
  GridOperand k[3];
};
__global__ void grid_pointers_kernel(GridOps g, void** ptrs, int64_t batch, int64_t total) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t o = i / batch, b = i % batch;
    for (int k = 0; k < 3; ++k)
      ptrs[k * total + i] = const_cast<char*>(static_cast<const char*>(g.k[k].base)) +
                            (o * g.k[k].outer + b * g.k[k].stride) * g.k[k].esz;
  }
}
}  // namespace

void write_grid_pointers(DeviceContext& c, void** ptrs, const GridOperand (&ops)[3], int64_t batch, int64_t count) {
  grid_pointers_kernel<<<blocks_for(count), kThreads, 0, c.stream>>>(GridOps{{ops[0], ops[1], ops[2]}}, ptrs, batch,
                                                                     count);
  check_launch("gemm grid (pointers)");
}

void CudaBackend::gemm_grid(DType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const void* A,
                            int64_t lda, int64_t sA, int64_t oA, const void* B, int64_t ldb, int64_t sB, int64_t oB,
                            double beta, void* C, int64_t ldc, int64_t sC, int64_t oC, int64_t batch, int64_t outer,
                            int dev) {
  const GemmGridPlan p = plan_gemm_grid(sA, oA, sB, oB, sC, oC, batch, outer);
  if (p.kind != GemmGridPlan::PointerArray) {
    gemm(t, ta, tb, M, N, K, alpha, A, lda, p.sA, B, ldb, p.sB, beta, C, ldc, p.sC, p.count, dev);
    return;
  }
  check_gemm_args(t, M, N, K, lda, ldb, ldc);
  if (p.count > INT_MAX)
    throw std::invalid_argument("gemm_grid: " + std::to_string(p.count) +
                                " products exceed cuBLAS's batch count (2^31 - 1); split the product");
  if (M == 0 || N == 0 || p.count == 0) return;
  DeviceContext& c = context(dev);
  composite::Scratch ptrs(*this, DType::Int64, dev, {3 * p.count});  // 8-byte slots: A, B, C pointers
  auto** pa = static_cast<const void**>(ptrs.d().data);
  auto** pb = pa + p.count;
  auto** pc = const_cast<void**>(pa + 2 * p.count);
  const int esz = (int)dtype_size(t);
  write_grid_pointers(c, const_cast<void**>(pa), {{A, sA, oA, esz}, {B, sB, oB, esz}, {C, sC, oC, esz}}, batch, p.count);
  auto h = static_cast<cublasHandle_t>(c.blas);
  const bool f32 = t == DType::Float32;
  const float af = (float)alpha, bf = (float)beta;
  const cudaDataType dt = f32 ? CUDA_R_32F : CUDA_R_64F;
  auto ld = [](int64_t v) { return (int)(v < 1 ? 1 : v); };
  const cublasStatus_t st = cublasGemmBatchedEx(
      h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)N, (int)M, (int)K,
      f32 ? static_cast<const void*>(&af) : static_cast<const void*>(&alpha), pb, dt, ld(ldb), pa, dt, ld(lda),
      f32 ? static_cast<const void*>(&bf) : static_cast<const void*>(&beta), pc, dt, ld(ldc), (int)p.count,
      (cublasComputeType_t)compute_type(t), CUBLAS_GEMM_DEFAULT);
  if (st != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cublasGemmBatchedEx failed on cuda:") + std::to_string(dev) + ": " +
                             cublasGetStatusString(st) + " (M " + std::to_string(M) + ", N " + std::to_string(N) +
                             ", K " + std::to_string(K) + ", " + std::to_string(p.count) + " products)");
}

int CudaBackend::compute_type(DType t) const {
  if (t != DType::Float32) return CUBLAS_COMPUTE_64F;
  return tf32_.load(std::memory_order_relaxed) ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

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
      (int)batch, (cublasComputeType_t)compute_type(t), CUBLAS_GEMM_DEFAULT);
  if (st != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cublasGemmStridedBatchedEx failed on cuda:") + std::to_string(dev) + ": " +
                             cublasGetStatusString(st) + " (M " + std::to_string(M) + ", N " + std::to_string(N) +
                             ", K " + std::to_string(K) + ", batch " + std::to_string(batch) + ")");
}

}  // namespace nl::cuda
