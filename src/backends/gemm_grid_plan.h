#pragma once
// How a backend with strided-batched GEMM (cuBLAS) runs a gemm_grid of outer x batch products
// (Backend::gemm_grid: product (o, b) reads A + o * outerA + b * strideA, B and C alike) in one call.
// Pure index arithmetic, kept C++17-clean (the CUDA backend includes it) and tested on the CPU.
#include <cstdint>

namespace nl {

/// One strided-batched call of `count` products with strides sA, sB, sC (elements), or, when the grid's
/// two strides cannot be folded into one, a pointer-array batched call (kind PointerArray).
struct GemmGridPlan {
  enum Kind {
    Batch,         ///< outer <= 1: the batch alone, strides (strideA, strideB, strideC)
    Outer,         ///< batch == 1: the outer products, strides (outerA, outerB, outerC)
    Flat,          ///< outerX == batch * strideX for A, B and C: outer * batch products, strides strideX
    PointerArray,  ///< anything else: one pointer per product (outer * batch of them, o major)
  } kind;
  int64_t count;
  int64_t sA, sB, sC;
};

/// The plan for a grid (see GemmGridPlan); product i = o * batch + b of a strided plan is product (o, b).
inline GemmGridPlan plan_gemm_grid(int64_t sA, int64_t oA, int64_t sB, int64_t oB, int64_t sC, int64_t oC,
                                   int64_t batch, int64_t outer) {
  if (outer <= 1) return {GemmGridPlan::Batch, outer < 1 ? 0 : batch, sA, sB, sC};
  if (batch == 1) return {GemmGridPlan::Outer, outer, oA, oB, oC};
  if (oA == batch * sA && oB == batch * sB && oC == batch * sC) return {GemmGridPlan::Flat, outer * batch, sA, sB, sC};
  return {GemmGridPlan::PointerArray, outer * batch, 0, 0, 0};
}

}  // namespace nl
