// Mixed-precision products run as float32 products of the widened operands (bf16_float32_gemm.h).
#include "backends/cpu/avx512_intrinsics.h"  // first: GCC 12's intrinsics warnings
#include "backends/cpu/bf16_float32_gemm.h"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "backends/cpu/bf16_convert.h"
#include "backends/cpu/bf16_simd.h"
#include "backends/cpu/sgemm_tile.h"
#include "backends/cpu/threads.h"
#include "backends/profiler.h"

namespace nl::cpu {
namespace {

// out[i] = the float32 value of bfloat16 bits in[i]: a 16-bit shift, exact, the same on every path; inline
// (the compiler vectorizes it) because the grids widen rows of 32 or 64 values, where a dispatched call
// would cost more than the row.
inline void widen_row(const uint16_t* in, float* out, int64_t n) {
  auto* o = reinterpret_cast<uint32_t*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = (uint32_t)in[i] << 16;
}

// A dense float32 copy of every distinct matrix of one operand: matrix (o, b) at o * outer + b * stride,
// rows ld apart (a broadcast axis of the original, step 0, stays broadcast).
struct Wide {
  const float* data;
  int64_t ld, stride, outer;
};

// Calls f(o, b, row of the dense result, row i of matrix (o, b)) for every row of an no × nb grid of
// `rows`-row matrices, the matrices split over the threads when there are at least kParallelGrain
// elements (row width `cols`). Nested loops: the grids have 16k rows of 32 values, where dividing a flat
// row index costs more than the row.
template <class F>
void for_grid_rows(int64_t no, int64_t nb, int64_t rows, int64_t cols, F f) {
#pragma omp parallel for collapse(2) schedule(static) if (no * nb * rows * cols >= kParallelGrain)
  for (int64_t o = 0; o < no; ++o)
    for (int64_t b = 0; b < nb; ++b)
      for (int64_t i = 0, r = (o * nb + b) * rows; i < rows; ++i, ++r) f(o, b, r, i);
}

// Widens operand X's stored matrices (rows × cols each, rows X.ld apart) of the outer × batch grid into buf.
Wide widen(std::vector<float>& buf, const GemmMatrix& X, int64_t rows, int64_t cols, int64_t batch, int64_t outer) {
  const int64_t nb = X.stride ? batch : 1, no = X.outer ? outer : 1, size = rows * cols;
  buf.resize((size_t)(no * nb * size));
  const auto* src = static_cast<const uint16_t*>(X.data);
  float* dst = buf.data();
  for_grid_rows(no, nb, rows, cols, [&](int64_t o, int64_t b, int64_t r, int64_t i) {
    widen_row(src + o * X.outer + b * X.stride + i * X.ld, dst + r * cols, cols);
  });
  return {dst, std::max<int64_t>(cols, 1), X.stride ? size : 0, X.outer ? nb * size : 0};
}

// C = act(C + bias) over every row of the grid's float32 results (c(o, b) rows ldc apart); act is ReLU
// when `relu`, bias may be null.
void epilogue(float* C, int64_t ldc, int64_t strideC, int64_t outerC, const MixedGemm& g, const float* bias,
              bool relu) {
  if (!bias && !relu) return;
  for_grid_rows(g.outer, g.batch, g.M, g.N, [&](int64_t o, int64_t b, int64_t, int64_t m) {
    float* c = C + o * outerC + b * strideC + m * ldc;
    if (bias)
      for (int64_t n = 0; n < g.N; ++n) c[n] += bias[n];
    if (relu)
      for (int64_t n = 0; n < g.N; ++n) c[n] = c[n] < 0.0f ? 0.0f : c[n];  // NaN stays NaN (as oneDNN, PyTorch)
  });
}

// Copies between the bfloat16 C of the grid and a dense float32 [outer·batch·M, N] (to_float: widen;
// else round to nearest even).
void convert_c(const MixedGemm& g, float* dense, bool to_float) {
  const Bf16Path path = bf16_convert_path();  // once: it reads the environment
  for_grid_rows(g.outer, g.batch, g.M, g.N, [&](int64_t o, int64_t b, int64_t r, int64_t m) {
    uint16_t* c = static_cast<uint16_t*>(g.C) + o * g.outerC + b * g.strideC + m * g.ldc;
    if (to_float)
      widen_row(c, dense + r * g.N, g.N);
    else
      float_to_bf16(path, dense + r * g.N, c, g.N);
  });
}

#ifdef __AVX512F__
constexpr int64_t kKc = 256;  // K block: a 32-column panel of op(B) is kKc × 128 bytes (32 KiB)
constexpr int64_t kMc = 128;  // row block: A's widened block is kMc × kKc floats (128 KiB, in L2)
constexpr int64_t kNc = 512;  // column block at most (the vocabulary's 8000 columns whole were 8 MiB of widened
                              // op(B), read again for every row block)
constexpr int64_t kWholeK = 1024;        // up to this K a row block runs all its K blocks back to back
constexpr int64_t kBFloats = 256 * 1024;  // ... on a column block whose widened op(B) (K × columns) fits 1 MiB

// One product of a grid: its bfloat16 operands (A [M, K] after op, stored [K, M] when ta; B alike) and
// the rest of Backend::gemm_mixed's contract.
struct Product {
  const uint16_t *A, *B;
  int64_t lda, ldb;
  bool ta, tb;
  int64_t M, N, K;
  float alpha, beta;
  const float* bias;
  bool relu;
};

// op(B)'s rows [p0, p0 + kc), columns [j0, j0 + nc), widened into bw in 32-column panels: panel q holds
// columns j0 + [32q, 32q + 32) as kc contiguous rows of 32 floats (the strip the register tile reads; rows of
// a row-major [kc, N] block would be N floats apart, 4 KiB for N = 1024, all in one L1 set). A B stored
// [N, K] is widened kKc rows at a time into bt and transposed by gathers of 16 rows.
void widen_b(const Product& p, int64_t p0, int64_t kc, int64_t j0, int64_t nc, std::vector<float>& bw,
             std::vector<float>& bt) {
  const int64_t panels = (nc + 31) / 32;
  bw.resize((size_t)(panels * kc * 32));
  if (!p.tb) {
    for (int64_t k = 0; k < kc; ++k)
      for (int64_t q = 0; q < panels; ++q)
        widen_row(p.B + (p0 + k) * p.ldb + j0 + q * 32, bw.data() + (q * kc + k) * 32,
                  std::min<int64_t>(32, nc - q * 32));
    return;
  }
  for (int64_t s0 = 0; s0 < kc; s0 += kKc) {  // K blocks of the stored rows: bt stays in L2
    const int64_t sc = std::min(kKc, kc - s0);
    bt.resize((size_t)(nc * sc));
    for (int64_t j = 0; j < nc; ++j) widen_row(p.B + (j0 + j) * p.ldb + p0 + s0, bt.data() + j * sc, sc);
    for (int64_t j = 0; j < nc; j += 16)  // columns j .. j + 15 of the block = rows of the stored block
      tile8::gather_columns16(bt.data() + j * sc, sc, std::min<int64_t>(16, nc - j), sc,
                              bw.data() + ((j / 32) * kc + s0) * 32 + j % 32, 32);
  }
}

// Register-tile rows: 12 × 32 (24 zmm accumulators) for op(A) read row by row and for the micro-panels of a
// stored-transposed A.
constexpr int kRowsA = 12, kRowsAT = 12;

// Rows [i0, i0 + mc) of op(A), columns [p0, p0 + kc), widened into aw as tile8::strip reads them: a
// row-major [mc, kc] block, or for a stored-transposed A, micro-panels of kRowsAT rows each [kc, kRowsAT]
// (panel q at q · kc · kRowsAT: the tile's values of one k in one line, read in order), each stored row's
// slice of 12 widened by one masked load and store.
void widen_a(const Product& p, int64_t i0, int64_t mc, int64_t p0, int64_t kc, std::vector<float>& aw) {
  aw.resize((size_t)(((mc + kRowsAT - 1) / kRowsAT) * kRowsAT * kc));
  if (!p.ta) {
    for (int64_t i = 0; i < mc; ++i) widen_row(p.A + (i0 + i) * p.lda + p0, aw.data() + i * kc, kc);
    return;
  }
  static_assert(kRowsAT <= 16, "one masked load per micro-panel row");
  for (int64_t k = 0; k < kc; ++k) {
    const uint16_t* src = p.A + (p0 + k) * p.lda + i0;
    for (int64_t q = 0; q * kRowsAT < mc; ++q) {
      const __mmask16 m = tile8::lane_mask(std::min<int64_t>(kRowsAT, mc - q * kRowsAT));
      const __m512i w = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, src + q * kRowsAT));
      _mm512_mask_storeu_ps(aw.data() + (q * kc + k) * kRowsAT, m, _mm512_castsi512_ps(_mm512_slli_epi32(w, 16)));
    }
  }
}

// Asks for slice s of `slices` of the stored region of op(A)'s block (rows [i0, i0 + mc), columns
// [p0, p0 + kc)) to be brought into the caches: the block widened next, fetched while the strips compute.
void prefetch_a_slice(const Product& p, int64_t i0, int64_t mc, int64_t p0, int64_t kc, int64_t s, int64_t slices) {
  const int64_t rows = p.ta ? kc : mc, bytes = (p.ta ? mc : kc) * 2;
  const int64_t r0 = rows * s / slices, r1 = rows * (s + 1) / slices;
  const uint16_t* start = p.ta ? p.A + p0 * p.lda + i0 : p.A + i0 * p.lda + p0;
  if (r1 > r0) prefetch_block(start + r0 * p.lda, r1 - r0, bytes, p.lda * 2, false);
}

// The rest of one row's epilogue while it is in cache: c[n] += bias[n] (bias not null), ReLU (NaN stays NaN,
// as oneDNN and PyTorch), and with c16 the rounding to nearest even into c16 (the bits of float_to_bf16_bits),
// else the result stored back into c; 16 lanes at a time, inline (a call per row cost more than the rows
// of the attention's 32 x 32 products).
inline void epilogue_row(float* c, int64_t n, const float* bias, bool relu, uint16_t* c16) {
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 m = tile8::lane_mask(n - j);
    __m512 v = _mm512_maskz_loadu_ps(m, c + j);
    if (bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bias + j));
    if (relu) v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ), _mm512_setzero_ps());
    if (c16)
      _mm256_mask_storeu_epi16(c16 + j, m, round_avx512(v));
    else
      _mm512_mask_storeu_ps(c + j, m, v);
  }
}

// One product: C = alpha · op(A) · op(B) + beta · C + bias on float32 C (row stride ldc), blocked like a
// BLAS. op(B) is widened a column block at a time over a group of K: all of K when K ≤ kWholeK (the
// column block narrowed to fit kBFloats), else one K block; then per block of kMc rows (in parallel over
// the threads when `threads`, each C row on one thread in a fixed order) each K block of the group has A
// widened and every 32-column panel multiplied on the register tile — the widening is the packing a BLAS
// does anyway, into buffers that stay in cache, and with the whole K in one group a row block's C stays in
// cache until it is done. Each output sums its K blocks in order: the result does not depend on the
// thread count. A row block starts as the bias (beta 0) and, after the last K block, gets the rest of the
// epilogue while in cache: the bias (beta != 0), ReLU, and with c16 the rounding into the bfloat16 C (row
// stride ldc16). C null (only with c16, beta 0 and K ≤ kWholeK): each row block is
// computed in a per-thread float32 block, so the float32 result never reaches memory.
void blocked_product(const Product& p, float* C, int64_t ldc, uint16_t* c16, int64_t ldc16, bool threads) {
  thread_local std::vector<float> bw, bt;
  const int64_t M = p.M, N = p.N, K = p.K;
  const int64_t group = K <= kWholeK ? K : kKc;
  const int64_t ncb = std::clamp<int64_t>(kBFloats / group / 32 * 32, 32, kNc);
  const bool bias_first = p.bias && p.beta == 0.0f, bias_after = p.bias && p.beta != 0.0f;
  const int64_t blocks = (M + kMc - 1) / kMc;
  threads = threads && M * N * K >= 64 * (int64_t)kParallelGrain && blocks > 1;
  for (int64_t g0 = 0; g0 < K; g0 += group)
    for (int64_t j0 = 0; j0 < N; j0 += ncb) {
      const int64_t gk = std::min(group, K - g0), nc = std::min(ncb, N - j0), strips = (nc + 31) / 32;
      const bool last = g0 + gk == K;
      widen_b(p, g0, gk, j0, nc, bw, bt);
      const float* Bw = bw.data();  // bw is this thread's: the team reads it through this pointer
      auto row_block = [&](int64_t blk) {
        thread_local std::vector<float> aw, cblock;
        const int64_t i0 = blk * kMc, mc = std::min(kMc, M - i0);
        float* c = C ? C + i0 * ldc + j0 : nullptr;
        int64_t ldcb = ldc;
        if (!C) {
          cblock.resize((size_t)(kMc * ncb));
          c = cblock.data(), ldcb = nc;
        }
        if (g0 == 0 && bias_first)
          for (int64_t i = 0; i < mc; ++i) std::copy(p.bias + j0, p.bias + j0 + nc, c + i * ldcb);
        for (int64_t p0 = g0; p0 < g0 + gk; p0 += kKc) {
          const int64_t kc = std::min(kKc, g0 + gk - p0);
          widen_a(p, i0, mc, p0, kc, aw);
          // The block of op(A) widened next (this row block's next K block, else the next row block's
          // first), asked for a slice per strip.
          const bool more_k = p0 + kc < g0 + gk, more = more_k || blk + 1 < blocks;
          const int64_t ni0 = more_k ? i0 : i0 + kMc, np0 = more_k ? p0 + kc : g0;
          const int64_t nmc = more ? std::min(kMc, M - ni0) : 0, nkc = std::min(kKc, g0 + gk - np0);
          const float beta_k = p0 > 0 || bias_first ? 1.0f : p.beta;
          for (int64_t j = 0; j < nc; j += 32) {
            if (more) prefetch_a_slice(p, ni0, nmc, np0, nkc, j / 32, strips);
            const __mmask16 m0 = tile8::lane_mask(nc - j), m1 = tile8::lane_mask(nc - j - 16);
            const float* Bp = Bw + j * gk + (p0 - g0) * 32;
            if (!p.ta) {
              tile8::strip<false, kRowsA>(mc, kc, aw.data(), kc, Bp, 32, c + j, ldcb, m0, m1, p.alpha, beta_k);
              continue;
            }
            for (int64_t q = 0; q * kRowsAT < mc; ++q)  // one micro-panel (fewer rows in the last) at a time
              tile8::strip<true, kRowsAT>(std::min<int64_t>(kRowsAT, mc - q * kRowsAT), kc,
                                          aw.data() + q * kc * kRowsAT, kRowsAT, Bp, 32, c + j + q * kRowsAT * ldcb,
                                          ldcb, m0, m1, p.alpha, beta_k);
          }
        }
        if (last && (bias_after || p.relu || c16))
          for (int64_t i = 0; i < mc; ++i) epilogue_row(c + i * ldcb, nc, bias_after ? p.bias + j0 : nullptr, p.relu,
                                                        c16 ? c16 + (i0 + i) * ldc16 + j0 : nullptr);
      };
      if (!threads) {  // no parallel region at all: entering one, even for one thread, costs a grid's small products
        for (int64_t blk = 0; blk < blocks; ++blk) row_block(blk);
        continue;
      }
#pragma omp parallel for schedule(static)
      for (int64_t blk = 0; blk < blocks; ++blk) row_block(blk);
    }
}

// Every product of g's grid on blocked_product: one product with the threads inside it, a grid with each
// product on one thread (contiguous shares, threads only when each gets kParallelGrain × 32 multiply-adds).
// A bfloat16 C is computed row block by row block in cache when it can (beta 0, K ≤ kWholeK), else in a
// per-thread float32 copy of the whole product (the old C widened first when beta != 0).
void grid_products(const MixedGemm& g) {
  const int64_t total = g.outer * g.batch;
  const bool bf16_c = g.c == DType::BFloat16, c_in_blocks = g.beta == 0.0 && g.K <= kWholeK;
  auto one = [&](int64_t o, int64_t b, bool threads) {
    thread_local std::vector<float> cw;
    const Product p{static_cast<const uint16_t*>(g.A.data) + o * g.A.outer + b * g.A.stride,
                    static_cast<const uint16_t*>(g.B.data) + o * g.B.outer + b * g.B.stride,
                    g.A.ld, g.B.ld, g.A.trans, g.B.trans, g.M, g.N, g.K, (float)g.alpha, (float)g.beta, g.bias, g.relu};
    const int64_t off = o * g.outerC + b * g.strideC;
    if (!bf16_c) return blocked_product(p, static_cast<float*>(g.C) + off, g.ldc, nullptr, 0, threads);
    uint16_t* c16 = static_cast<uint16_t*>(g.C) + off;
    if (c_in_blocks) return blocked_product(p, nullptr, 0, c16, g.ldc, threads);
    cw.resize((size_t)(g.M * g.N));
    if (g.beta != 0.0)
      for (int64_t i = 0; i < g.M; ++i) widen_row(c16 + i * g.ldc, cw.data() + i * g.N, g.N);
    blocked_product(p, cw.data(), g.N, c16, g.ldc, threads);
  };
  if (total == 1) return one(0, 0, true);
  const int nt = (int)std::max<int64_t>(
      1, std::min<int64_t>(omp_get_max_threads(), total * g.M * g.N * g.K / (kParallelGrain * 32)));
  // Small products (the attention's 32 x 32 x 32): the next product's stored operands and C are asked for
  // while this one computes, as in small_sgemm_grid, so only a thread's first product starts cold.
  const bool ahead = (g.M + g.N) * g.K <= 64 * 64 * 2;
  const int64_t c_size = bf16_c ? 2 : 4;
  auto prefetch = [&](int64_t n) {
    const int64_t o = n / g.batch, b = n % g.batch;
    const auto* a = static_cast<const uint16_t*>(g.A.data) + o * g.A.outer + b * g.A.stride;
    const auto* bm = static_cast<const uint16_t*>(g.B.data) + o * g.B.outer + b * g.B.stride;
    prefetch_block(a, g.A.trans ? g.K : g.M, (g.A.trans ? g.M : g.K) * 2, g.A.ld * 2, false);
    prefetch_block(bm, g.B.trans ? g.N : g.K, (g.B.trans ? g.K : g.N) * 2, g.B.ld * 2, false);
    prefetch_block(static_cast<char*>(g.C) + (o * g.outerC + b * g.strideC) * c_size, g.M, g.N * c_size,
                   g.ldc * c_size, true);
  };
#pragma omp parallel for schedule(static, 1) num_threads(nt) if (nt > 1)
  for (int t = 0; t < nt; ++t)
    for (int64_t n = total * t / nt, end = total * (t + 1) / nt; n < end; ++n) {
      if (ahead && n + 1 < end) prefetch(n + 1);
      one(n / g.batch, n % g.batch, false);
    }
}
#endif

// Rows of a single product with a bfloat16 C per pass of the widened path: its float32 copy of C is then at
// most this many rows (the [4096 × 8000] bfloat16 logits would need 125 MiB whole).
constexpr int64_t kWidenRows = 256;

// The widened path for the rows g covers: op(A) widened, the backend's float32 products against the widened
// op(B) (B), then the bias, ReLU and, for a bfloat16 C, the rounding from a dense float32 copy (read first
// when beta != 0).
void widened_products(Backend& be, const MixedGemm& g, const Wide& B) {
  thread_local std::vector<float> abuf, cbuf;
  const bool bf16_c = g.c == DType::BFloat16;
  Wide A{};
  float* C = static_cast<float*>(g.C);
  {
    prof::Scope prof_scope(prof::Cat::Elementwise, "bf16_widen");
    A = widen(abuf, g.A, g.A.trans ? g.K : g.M, g.A.trans ? g.M : g.K, g.batch, g.outer);
    if (bf16_c) {
      cbuf.resize((size_t)(g.outer * g.batch * g.M * g.N));
      if (g.beta != 0.0) convert_c(g, cbuf.data(), true);
      C = cbuf.data();
    }
  }
  const int64_t ldc = bf16_c ? std::max<int64_t>(g.N, 1) : g.ldc, strideC = bf16_c ? g.M * g.N : g.strideC,
                outerC = bf16_c ? g.batch * g.M * g.N : g.outerC;
  be.gemm_grid(DType::Float32, g.A.trans, g.B.trans, g.M, g.N, g.K, g.alpha, A.data, A.ld, A.stride, A.outer, B.data,
               B.ld, B.stride, B.outer, g.beta, C, ldc, strideC, outerC, g.batch, g.outer, g.device_index);
  prof::Scope prof_scope(prof::Cat::Elementwise, "bf16_epilogue");
  epilogue(C, ldc, strideC, outerC, g, g.bias, g.relu);
  if (bf16_c) convert_c(g, C, false);
}
}  // namespace

bool bf16_float32_blocked_kernel() {
#ifdef __AVX512F__
  return true;
#else
  return false;
#endif
}

void bf16_gemm_float32(Backend& be, const MixedGemm& g) {
#ifdef __AVX512F__
  if (g.K > 0) {
    prof::Scope prof_scope(prof::Cat::Gemm, "bf16_float32_products");
    prof::add_gemm_flops(2.0 * (double)g.M * (double)g.N * (double)g.K * (double)(g.batch * g.outer));
    return grid_products(g);
  }
#endif
  // Elsewhere (and for K = 0) op(B) is widened once, and a single product with a bfloat16 C runs
  // kWidenRows rows at a time.
  thread_local std::vector<float> bbuf;
  Wide B{};
  {
    prof::Scope prof_scope(prof::Cat::Elementwise, "bf16_widen");
    B = widen(bbuf, g.B, g.B.trans ? g.N : g.K, g.B.trans ? g.K : g.N, g.batch, g.outer);
  }
  const bool bf16_c = g.c == DType::BFloat16;
  const int64_t rows = bf16_c && g.batch * g.outer == 1 ? kWidenRows : std::max<int64_t>(g.M, 1);
  for (int64_t r0 = 0; r0 < g.M; r0 += rows) {
    MixedGemm part = g;
    part.M = std::min(rows, g.M - r0);
    part.A.data = static_cast<const uint16_t*>(g.A.data) + (g.A.trans ? r0 : r0 * g.A.ld);
    part.C = static_cast<char*>(g.C) + r0 * g.ldc * (bf16_c ? 2 : 4);
    widened_products(be, part, B);
  }
}

}  // namespace nl::cpu
