#pragma once
// Grids of small mixed-precision products — the attention's per-head QKᵀ, P·V and their four gradient
// products (32 × 32 × 32 per head in the cls model) — on AVX512_BF16's vdpbf16ps, with bfloat16 operands
// and float32 accumulation, as Backend::gemm_mixed defines them.
//
// Why not oneDNN: its matmul primitive ran this grid (512 products of [32 × 32]·[32 × 32] read from the
// packed projection's strided rows) at ~50–85 GFLOP/s on a Zen 4 core with warm operands, a third of its
// rate on the Transformer's big products (ONEDNN_VERBOSE=2 on `bench transformer --config cls --bf16`,
// 2026-11-27): a product this short spends its time in per-call setup. This kernel packs op(B) into
// vdpbf16ps's pair layout in a per-thread scratch (and op(A) when it is stored transposed or K is odd),
// keeps an 8-row × 32-column tile in registers, and prefetches the operands and result two products
// ahead. Measured the same day, one thread, the three grid layouts of the attention (QKᵀ, P·V with a
// bfloat16 result, dSᵀ·Q): 90–120 GFLOP/s against oneDNN's 50–85 with warm operands, and 36–59 against
// 27–47 with operands cold in memory (both then wait on memory); in the cls step the products' rate inside
// the GEMM calls went from 166–168 to 175–180 GFLOP/s over two alternating runs each.
#include <cstdint>

#include "backends/backend.h"

namespace nl::cpu {

/// Whether small_bf16_gemm_grid takes g: this CPU has AVX512_BF16 (detected at run time), g has no bias
/// and no ReLU, M, N and K are in [1, 256] and M·N·K ≤ 64³.
bool small_bf16_gemm_fits(const MixedGemm& g);

/// Runs g (Backend::gemm_mixed's contract: C(o, b) = alpha · op(A(o, b)) · op(B(o, b)) + beta · C(o, b),
/// bfloat16 A and B, float32 or bfloat16 C; beta == 0 does not read C). Each output is one float32
/// accumulator summed over k in pairs in order (vdpbf16ps: bfloat16 subnormal operands count as zero, as in
/// oneDNN's kernels on the same instruction), then scaled, and rounded to nearest even once when C is
/// bfloat16 (cpu::float_to_bf16). Products are split over the threads (nl::set_num_threads), each on one
/// thread, so the result does not depend on the thread count. Throws std::logic_error when
/// !small_bf16_gemm_fits(g).
void small_bf16_gemm_grid(const MixedGemm& g);

}  // namespace nl::cpu
