#pragma once
// Backend::gemm_mixed as float32 products, for CPUs whose bfloat16 dot products are slower than their
// float32 FMAs or missing (bf16_dot_rate.h): every distinct operand matrix of the grid is widened to
// float32 once (exact: a bfloat16 is a float32 with 16 zero low bits), then the CPU backend's float32
// grid product runs (OpenBLAS sgemm, or the small-product kernel for the attention's per-head grids),
// then the bias and ReLU, and a bfloat16 C is rounded once. The values are those of the native path's
// definition — bfloat16 operands, float32 accumulation — up to float32 summation order (and bfloat16
// subnormal operands, which vdpbf16ps counts as zero and this path keeps).
#include "backends/backend.h"

namespace nl::cpu {

/// Runs g (Backend::gemm_mixed's contract, checked by the caller) on `be`'s float32 gemm_grid. The
/// widened operands live in per-thread buffers that grow to the largest product seen (float32: twice
/// the operands' bytes). Timed as kernel "bf16_widen" (the widening and C's rounding) beside the float32
/// products' own kernels; throws what be.gemm_grid throws.
void bf16_gemm_float32(Backend& be, const MixedGemm& g);

}  // namespace nl::cpu
