#pragma once
// Backend::gemm_mixed as float32 products, for CPUs whose bfloat16 dot products are slower than their
// float32 FMAs or missing (bf16_dot_rate.h). On AVX-512 builds every product of the grid runs on a
// BLAS-like blocked kernel whose packing is the widening (exact: a bfloat16 is a float32 with 16 zero low
// bits) into cache-sized float32 blocks, on the float32 register tile of sgemm_tile.h, with the bias, ReLU
// and the rounding of a bfloat16 C applied to each row block in cache; elsewhere the operands are widened
// (a single product with a bfloat16 C 256 rows of A at a time) and the backend's float32 gemm_grid
// (OpenBLAS) runs. The values are those of the native path's
// definition — bfloat16 operands, float32 accumulation — up to float32 summation order (and bfloat16
// subnormal operands, which vdpbf16ps counts as zero and this path keeps).
#include "backends/backend.h"

namespace nl::cpu {

/// Runs g (Backend::gemm_mixed's contract, checked by the caller). On the blocked kernel a single
/// product's rows are split over the threads, a grid's products (each on one thread); either way the result
/// does not depend on the thread count. Without it the bits are OpenBLAS's: its Zen kernels (0.3.21, an
/// AVX2 build) give a product's rows different bits for another thread count or row count. The widened blocks live in per-thread buffers (op(B): at most 1 MiB of floats, K × N
/// column blocks; op(A): 128 × 256 floats; a bfloat16 C: one 128-row block, or with K > 1024 or beta != 0
/// an M × N float32 copy). Timed and counted
/// as kernel "bf16_float32_products" (on a build without AVX-512: "bf16_widen", "bf16_epilogue" and the
/// float32 products' own kernels); throws what be.gemm_grid throws (`be` is used only without AVX-512).
void bf16_gemm_float32(Backend& be, const MixedGemm& g);

/// True on builds with the blocked kernel (AVX-512), false where OpenBLAS runs the widened products.
bool bf16_float32_blocked_kernel();

}  // namespace nl::cpu
