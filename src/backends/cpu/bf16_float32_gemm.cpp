// Mixed-precision products run as float32 products of the widened operands (bf16_float32_gemm.h).
#include "backends/cpu/bf16_float32_gemm.h"

#include <algorithm>
#include <vector>

#include "backends/cpu/bf16_convert.h"
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

// op(B)'s rows [p0, p0 + kc) widened into bw in 32-column panels: panel q holds columns [32q, 32q + 32) as
// kc contiguous rows of 32 floats (the strip the register tile reads; rows of a row-major [kc, N] block would
// be N floats apart, 4 KiB for N = 1024, all in one L1 set). A B stored [N, K] is transposed on the way.
void widen_b(const MixedGemm& g, int64_t p0, int64_t kc, std::vector<float>& bw, std::vector<float>& bt) {
  const auto* B = static_cast<const uint16_t*>(g.B.data);
  const int64_t N = g.N, panels = (N + 31) / 32;
  bw.resize((size_t)(panels * kc * 32));
  if (!g.B.trans) {
    for (int64_t k = 0; k < kc; ++k)
      for (int64_t q = 0; q < panels; ++q)
        widen_row(B + (p0 + k) * g.B.ld + q * 32, bw.data() + (q * kc + k) * 32, std::min<int64_t>(32, N - q * 32));
    return;
  }
  bt.resize((size_t)(N * kc));
  for (int64_t j = 0; j < N; ++j) widen_row(B + j * g.B.ld + p0, bt.data() + j * kc, kc);
  for (int64_t q = 0; q < panels; ++q)
    for (int64_t k0 = 0; k0 < kc; k0 += 16)
      for (int64_t j = q * 32; j < std::min(q * 32 + 32, N); ++j)
        for (int64_t k = k0; k < std::min(k0 + 16, kc); ++k)
          bw[(size_t)((q * kc + k) * 32 + j - q * 32)] = bt[(size_t)(j * kc + k)];
}

// Rows [i0, i0 + mc) of op(A), columns [p0, p0 + kc), widened into aw: row-major [mc, kc] (lda kc), or
// for a stored-transposed A its stored [kc, mc] block (lda mc), as tile8::strip<TA> reads them.
int64_t widen_a(const MixedGemm& g, int64_t i0, int64_t mc, int64_t p0, int64_t kc, std::vector<float>& aw) {
  const auto* A = static_cast<const uint16_t*>(g.A.data);
  aw.resize((size_t)(mc * kc));
  if (!g.A.trans) {
    for (int64_t i = 0; i < mc; ++i) widen_row(A + (i0 + i) * g.A.ld + p0, aw.data() + i * kc, kc);
    return kc;
  }
  for (int64_t k = 0; k < kc; ++k) widen_row(A + (p0 + k) * g.A.ld + i0, aw.data() + k * mc, mc);
  return mc;
}

// One product (batch = outer = 1): C = alpha · op(A) · op(B) + beta · C + bias on float32 C (row stride
// ldc), blocked like a BLAS: per K block op(B) widened once, then per block of kMc rows (in parallel over
// the threads, each C row on one thread in a fixed order) A widened and every 32-column panel multiplied on
// the 12 × 32 register tile; the widening is the packing a BLAS does anyway. Each output sums its K blocks
// in order: the result does not depend on the thread count. After its last K block each row block gets
// the rest of the epilogue while it is in cache: the bias (when beta != 0), ReLU, and with c16 the rounding
// into the bfloat16 C (c16, row stride ldc16).
void blocked_product(const MixedGemm& g, float* C, int64_t ldc, uint16_t* c16, int64_t ldc16) {
  thread_local std::vector<float> bw, bt;
  const int64_t M = g.M, N = g.N, K = g.K;
  float beta = (float)g.beta;
  const bool bias_after = g.bias && beta != 0.0f;  // else C starts as the bias
  if (g.bias && beta == 0.0f) {  // C starts as the bias: the first K block then adds onto it
    for (int64_t i = 0; i < M; ++i) std::copy(g.bias, g.bias + N, C + i * ldc);
    beta = 1.0f;
  }
  const int64_t blocks = (M + kMc - 1) / kMc;
  const bool threads = M * N * K >= 64 * (int64_t)kParallelGrain && blocks > 1;
  const Bf16Path path = bf16_convert_path();
  for (int64_t p0 = 0; p0 < K; p0 += kKc) {
    const int64_t kc = std::min(kKc, K - p0);
    const bool last = p0 + kc == K;
    widen_b(g, p0, kc, bw, bt);
    const float* Bw = bw.data();  // bw is this thread's: the team reads it through this pointer
    const float beta_k = p0 == 0 ? beta : 1.0f;
#pragma omp parallel for schedule(static) if (threads)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      thread_local std::vector<float> aw;
      const int64_t i0 = blk * kMc, mc = std::min(kMc, M - i0);
      const int64_t lda = widen_a(g, i0, mc, p0, kc, aw);
      for (int64_t j = 0; j < N; j += 32) {
        const __mmask16 m0 = tile8::lane_mask(N - j), m1 = tile8::lane_mask(N - j - 16);
        float* c = C + i0 * ldc + j;
        if (g.A.trans)
          tile8::strip<true, 12>(mc, kc, aw.data(), lda, Bw + j * kc, 32, c, ldc, m0, m1, (float)g.alpha, beta_k);
        else
          tile8::strip<false, 12>(mc, kc, aw.data(), lda, Bw + j * kc, 32, c, ldc, m0, m1, (float)g.alpha, beta_k);
      }
      if (!last) continue;
      for (int64_t i = i0; i < i0 + mc; ++i) {  // the epilogue, while the rows are in cache
        float* c = C + i * ldc;
        if (bias_after)
          for (int64_t n = 0; n < N; ++n) c[n] += g.bias[n];
        if (g.relu)
          for (int64_t n = 0; n < N; ++n) c[n] = c[n] < 0.0f ? 0.0f : c[n];  // NaN stays NaN (as oneDNN, PyTorch)
        if (c16) float_to_bf16(path, c, c16 + i * ldc16, N);
      }
    }
  }
}
#endif

}  // namespace

void bf16_gemm_float32(Backend& be, const MixedGemm& g) {
  thread_local std::vector<float> abuf, bbuf, cbuf;
  const bool bf16_c = g.c == DType::BFloat16;
  // A bfloat16 C is computed in a dense float32 copy (read first when beta != 0), rounded once at the end.
  auto float_c = [&](int64_t products) {
    cbuf.resize((size_t)(products * g.M * g.N));
    if (g.beta != 0.0) convert_c(g, cbuf.data(), true);
    return cbuf.data();
  };
#ifdef __AVX512F__
  if (g.batch * g.outer == 1 && g.K > 0 && g.M * g.N * g.K > 64 * 64 * 64) {
    float* C = static_cast<float*>(g.C);
    int64_t ldc = g.ldc;
    if (bf16_c) {
      prof::Scope prof_scope(prof::Cat::Elementwise, "bf16_widen");
      C = float_c(1), ldc = g.N;
    }
    prof::Scope prof_scope(prof::Cat::Gemm, "bf16_blocked_products");
    prof::add_gemm_flops(2.0 * (double)g.M * (double)g.N * (double)g.K);
    blocked_product(g, C, ldc, bf16_c ? static_cast<uint16_t*>(g.C) : nullptr, g.ldc);
    return;
  }
#endif
  Wide A{}, B{};
  float* C = static_cast<float*>(g.C);
  {
    prof::Scope prof_scope(prof::Cat::Elementwise, "bf16_widen");
    A = widen(abuf, g.A, g.A.trans ? g.K : g.M, g.A.trans ? g.M : g.K, g.batch, g.outer);
    B = widen(bbuf, g.B, g.B.trans ? g.N : g.K, g.B.trans ? g.K : g.N, g.batch, g.outer);
    if (bf16_c) C = float_c(g.outer * g.batch);
  }
  const int64_t ldc = bf16_c ? std::max<int64_t>(g.N, 1) : g.ldc, strideC = bf16_c ? g.M * g.N : g.strideC,
                outerC = bf16_c ? g.batch * g.M * g.N : g.outerC;
  be.gemm_grid(DType::Float32, g.A.trans, g.B.trans, g.M, g.N, g.K, g.alpha, A.data, A.ld, A.stride, A.outer, B.data,
               B.ld, B.stride, B.outer, g.beta, C, ldc, strideC, outerC, g.batch, g.outer, g.device_index);
  prof::Scope prof_scope(prof::Cat::Elementwise, "bf16_epilogue");
  epilogue(C, ldc, strideC, outerC, g, g.bias, g.relu);
  if (bf16_c) convert_c(g, C, false);
}

}  // namespace nl::cpu
