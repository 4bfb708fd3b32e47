#pragma once
// Pointer arrays for a grid of outer x batch products whose strides do not fold into one strided-batched
// call (gemm_grid_plan.h's PointerArray): built on the device by one kernel (cuda_blas.cu), read by
// cublasGemmBatchedEx. Shared by CudaBackend::gemm_grid (float32 / float64) and gemm_mixed (bfloat16
// operands, float32 or bfloat16 C), whose operands differ in element size.
#include <cstdint>

#include "backends/cuda/cuda_context.h"

namespace nl::cuda {

/// One operand of a grid: product (o, b) starts at base + (o * outer + b * stride) * esz bytes.
struct GridOperand {
  const void* base;
  int64_t stride, outer;
  int esz;
};

/// Writes ptrs[k * count + o * batch + b] = the start of product (o, b) of operand k (A, B, C) for the
/// count = outer * batch products of the grid, on c's stream. `ptrs` holds 3 * count device pointers.
void write_grid_pointers(DeviceContext& c, void** ptrs, const GridOperand (&ops)[3], int64_t batch, int64_t count);

}  // namespace nl::cuda
