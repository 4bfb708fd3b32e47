#pragma once
// Batched products of small float matrices — the attention's per-head QKᵀ, P·V and their gradients
// (32 × 32 × 32 per head in the cls model) — with a register-tile kernel (AVX-512, or AVX2 + FMA) that
// prefetches the next matrix's operands while it multiplies the current one.
//
// Why not OpenBLAS: its per-call path reads each head's q, k, v rows cold (they are strided rows of the
// packed projection, written long before), and a 32³ product is too short for the hardware prefetcher to
// hide that; measured on an Emerald Rapids core (2026-11-24, `git show 3094267:docs/bench.md`), the QKᵀ of
// one head ran at 23–37 GFLOP/s with cold operands through OpenBLAS and at 44–46 GFLOP/s with this
// kernel's look-ahead.
#include <cstdint>

namespace nl::cpu {

/// Whether small_sgemm_grid takes products of this size on this build: AVX-512 or AVX2 + FMA builds, M, N, K
/// in [1, 256] and M·N·K ≤ 64³ (bigger products go to OpenBLAS, whose packing pays off there).
bool small_sgemm_fits(int64_t M, int64_t N, int64_t K);

/// One operand of a grid of products: matrix (o, b) starts at p + o * outer + b * stride (elements),
/// rows ld apart.
struct GridOperand {
  const float* p;
  int64_t ld, stride, outer;
};

/// For o < outer, b < batch: C_ob = alpha · op(A_ob) · op(B_ob) + beta · C_ob, row-major; op(A) is [M, K]
/// (A stored [K, M] when ta), op(B) is [K, N] (B stored [N, K] when tb); C_ob = C + o * outerC + b *
/// strideC. beta == 0 does not read C (BLAS semantics: NaN in C is overwritten). Each output is one
/// float FMA chain over k in order, so a row does not depend on M or on the other rows; big grids are
/// split over the threads (nl::set_num_threads), each product on one thread, so the result does not
/// depend on the thread count. Throws
/// std::logic_error when !small_sgemm_fits(M, N, K).
void small_sgemm_grid(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, GridOperand A, GridOperand B,
                      float beta, float* C, int64_t ldc, int64_t strideC, int64_t outerC, int64_t batch, int64_t outer);

}  // namespace nl::cpu
