// Small mixed-precision product grids on vdpbf16ps (small_bf16_gemm.h).
//
// vdpbf16ps adds, in each of 16 float32 lanes j, a[2j]·b[2j] + a[2j+1]·b[2j+1]: pairs of k. So op(B) is
// packed as [K/2][N][2] (the two k of a pair side by side for each column, a zero pads an odd K), a row
// of op(A) is read as k pairs (one 32-bit word, broadcast to every lane), and a tile of R rows × 32
// columns of C lives in 2R zmm accumulators over all of K.
#include "backends/cpu/avx512_intrinsics.h"  // first: GCC 12's intrinsics warnings
#include "backends/cpu/small_bf16_gemm.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cpu/bf16_simd.h"
#include "backends/cpu/cpu_features.h"
#include "backends/cpu/prefetch.h"
#include "backends/cpu/threads.h"
#if defined(__x86_64__)
#include <immintrin.h>
#define NL_BF16_KERNELS 1
#define NL_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))
#endif

namespace nl::cpu {

#ifdef NL_BF16_KERNELS
namespace {
using u16 = uint16_t;
constexpr int kRows = 8;  // rows per register tile: 8 × 2 zmm accumulators

// Where op(A)'s pair (i, p) — the 32-bit word of elements k = 2p, 2p + 1 of row i — starts: a + i * ai + p * ap.
struct PairRows {
  const u16* a;
  int64_t ai, ap;
};

// The 32-bit word at p (a pair of bfloat16) in every lane: a broadcast load.
NL_BF16_TARGET inline __m512i broadcast_word(const u16* p) {
  float w;
  std::memcpy(&w, p, 4);
  return _mm512_castps_si512(_mm512_set1_ps(w));
}

NL_BF16_TARGET inline __mmask32 mask32(int64_t n) {
  return n >= 32 ? (__mmask32)0xFFFFFFFFu : n <= 0 ? (__mmask32)0 : (__mmask32)((1u << n) - 1);
}
NL_BF16_TARGET inline __mmask16 mask16(int64_t n) {
  return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1);
}

// Rows k = 2p, 2p + 1 (ld apart) of a stored [K, L] matrix into out[p][l][2], l < L, for every pair p
// (a zero for k = K when K is odd); out's rows are Lp (a multiple of 32) pairs apart, padded with zeros.
NL_BF16_TARGET void pack_row_pairs(const u16* x, int64_t ld, int64_t K, int64_t L, int64_t Lp, u16* out) {
  const __m512i lo = _mm512_setr_epi32(0x00200000, 0x00210001, 0x00220002, 0x00230003, 0x00240004, 0x00250005,
                                       0x00260006, 0x00270007, 0x00280008, 0x00290009, 0x002a000a, 0x002b000b,
                                       0x002c000c, 0x002d000d, 0x002e000e, 0x002f000f);
  const __m512i hi = _mm512_add_epi16(lo, _mm512_set1_epi16(16));
  for (int64_t k = 0; k < K; k += 2) {
    const u16* r0 = x + k * ld;
    const u16* r1 = r0 + ld;
    u16* o = out + k * Lp;  // pair p = k / 2 starts at p * Lp * 2
    for (int64_t l = 0; l < Lp; l += 32) {
      const __mmask32 m = mask32(L - l);
      const __m512i x0 = _mm512_maskz_loadu_epi16(m, r0 + l);
      const __m512i x1 = k + 1 < K ? _mm512_maskz_loadu_epi16(m, r1 + l) : _mm512_setzero_si512();
      _mm512_storeu_si512(o + 2 * l, _mm512_permutex2var_epi16(x0, lo, x1));
      _mm512_storeu_si512(o + 2 * l + 32, _mm512_permutex2var_epi16(x0, hi, x1));
    }
  }
}

// 16 × 16 32-bit words transposed in registers: r[i] holds row i on entry, column i on return. In two
// steps that keep few registers live (the one-stage-at-a-time form spilled to the stack: 284 stack
// accesses in pack_transposed_pairs, 115 now): each group of 4 rows is transposed 4 × 4 within its
// 128-bit lanes, then the lanes of the 4 groups are exchanged per column.
NL_BF16_TARGET inline __attribute__((always_inline)) void transpose16(__m512i* r) {
  __m512i q[16];
#pragma GCC unroll 4
  for (int g = 0; g < 16; g += 4) {  // q[g + j], lane L: column 4L + j of rows g .. g + 3
    const __m512i a = _mm512_unpacklo_epi32(r[g], r[g + 1]), b = _mm512_unpackhi_epi32(r[g], r[g + 1]);
    const __m512i c = _mm512_unpacklo_epi32(r[g + 2], r[g + 3]), d = _mm512_unpackhi_epi32(r[g + 2], r[g + 3]);
    q[g] = _mm512_unpacklo_epi64(a, c);
    q[g + 1] = _mm512_unpackhi_epi64(a, c);
    q[g + 2] = _mm512_unpacklo_epi64(b, d);
    q[g + 3] = _mm512_unpackhi_epi64(b, d);
  }
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {  // column 4L + j is lane L of q[g + j] for g = 0, 4, 8, 12: into r[4L + j]
    const __m512i e = _mm512_shuffle_i32x4(q[j], q[4 + j], 0x44), f = _mm512_shuffle_i32x4(q[j], q[4 + j], 0xee);
    const __m512i h = _mm512_shuffle_i32x4(q[8 + j], q[12 + j], 0x44),
                  k = _mm512_shuffle_i32x4(q[8 + j], q[12 + j], 0xee);
    r[j] = _mm512_shuffle_i32x4(e, h, 0x88);       // lane 0 of each group
    r[4 + j] = _mm512_shuffle_i32x4(e, h, 0xdd);   // lane 1
    r[8 + j] = _mm512_shuffle_i32x4(f, k, 0x88);   // lane 2
    r[12 + j] = _mm512_shuffle_i32x4(f, k, 0xdd);  // lane 3
  }
}

// A stored [N, K] (rows ld apart; op(B) = its transpose) into out[p][n][2] = (x[n][2p], x[n][2p + 1])
// (zero for k = K when K is odd, and for n >= N up to Np): the pair is already a word of each stored row,
// so blocks of 16 rows × 16 words are transposed in registers (whole blocks by plain loads and stores).
NL_BF16_TARGET void pack_transposed_pairs(const u16* x, int64_t ld, int64_t K, int64_t N, int64_t Np, u16* out) {
  const int64_t K2 = (K + 1) / 2;
  for (int64_t n = 0; n < Np; n += 16)
    for (int64_t p = 0; p < K2; p += 16) {
      __m512i r[16];
      if (n + 16 <= N && K - 2 * p >= 32) {
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_si512(x + (n + i) * ld + 2 * p);
      } else {
        const __mmask32 m = mask32(K - 2 * p);
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i)
          r[i] = n + i < N ? _mm512_maskz_loadu_epi16(m, x + (n + i) * ld + 2 * p) : _mm512_setzero_si512();
      }
      transpose16(r);
      if (p + 16 <= K2) {
#pragma GCC unroll 16
        for (int q = 0; q < 16; ++q) _mm512_storeu_si512(out + ((p + q) * Np + n) * 2, r[q]);
      } else {
        for (int q = 0; p + q < K2; ++q) _mm512_storeu_si512(out + ((p + q) * Np + n) * 2, r[q]);
      }
    }
}

// The product's result rows [i0, i0 + R), columns [j, j + 16V) (m0, m1 select the valid ones) in acc.
template <int R, int V>
NL_BF16_TARGET inline void tile(int64_t K2, PairRows A, int64_t i0, const u16* Bp, int64_t Np, __m512* acc) {
  __m512 c[R][V];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) c[r][v] = _mm512_setzero_ps();
  const u16* a0 = A.a + i0 * A.ai;
  for (int64_t p = 0; p < K2; ++p) {
    const u16* bp = Bp + p * Np * 2;
    __m512i b[V];
    for (int v = 0; v < V; ++v) b[v] = _mm512_loadu_si512(bp + 32 * v);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512i a = broadcast_word(a0 + r * A.ai + p * A.ap);
      for (int v = 0; v < V; ++v) c[r][v] = _mm512_dpbf16_ps(c[r][v], (__m512bh)a, (__m512bh)b[v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r * 2 + v] = c[r][v];
}

// C rows [i0, i0 + R), columns [j, j + cols) from the accumulators: alpha · acc + beta · C, in C's dtype
// (a bfloat16 C rounded once, round_avx512bf16). Bf16 / Beta: C's dtype and whether beta != 0, compiled
// apart so that the row loop has no branches.
template <bool Bf16, bool Beta>
NL_BF16_TARGET inline __attribute__((always_inline)) void store_tile(const MixedGemm& g, void* C, int64_t i0, int R,
                                                                     int64_t j, int64_t cols, const __m512* acc) {
  const __m512 va = _mm512_set1_ps((float)g.alpha), vb = _mm512_set1_ps((float)g.beta);
  const __mmask16 m[2] = {mask16(cols), mask16(cols - 16)};
  const int nv = cols > 16 ? 2 : 1;
  if constexpr (Bf16 && !Beta)
    if (cols == 32) {  // a whole strip: both halves of a row rounded by one vcvtne2ps2bf16 (round32_avx512bf16)
      for (int r = 0; r < R; ++r)
        _mm512_storeu_si512(static_cast<u16*>(C) + (i0 + r) * g.ldc + j,
                            round32_avx512bf16(_mm512_mul_ps(va, acc[r * 2]), _mm512_mul_ps(va, acc[r * 2 + 1])));
      return;
    }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < nv; ++v) {
      const int64_t off = (i0 + r) * g.ldc + j + 16 * v;
      __m512 x = _mm512_mul_ps(va, acc[r * 2 + v]);
      if constexpr (Bf16) {
        u16* c = static_cast<u16*>(C) + off;
        if constexpr (Beta) {  // the old bfloat16 values widened exactly: bits << 16
          const __m512i old = _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m[v], c)), 16);
          x = _mm512_fmadd_ps(vb, _mm512_castsi512_ps(old), x);
        }
        _mm256_mask_storeu_epi16(c, m[v], round_avx512bf16(x));
      } else {
        float* c = static_cast<float*>(C) + off;
        if constexpr (Beta) x = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m[v], c), x);
        _mm512_mask_storeu_ps(c, m[v], x);
      }
    }
}

// All M rows of one column strip [j, j + 32) (V = 1: the strip has at most 16 columns).
template <int V, bool Bf16, bool Beta>
NL_BF16_TARGET void strip(const MixedGemm& g, int64_t K2, PairRows A, const u16* Bp, int64_t Np, void* C, int64_t j) {
  const int64_t cols = std::min<int64_t>(g.N - j, 32);
  __m512 acc[2 * kRows];
  int64_t i = 0;
  for (; i + kRows <= g.M; i += kRows) {
    tile<kRows, V>(K2, A, i, Bp + 2 * j, Np, acc);
    store_tile<Bf16, Beta>(g, C, i, kRows, j, cols, acc);
  }
  const int rest = (int)(g.M - i);
  switch (rest) {
    case 7: tile<7, V>(K2, A, i, Bp + 2 * j, Np, acc); break;
    case 6: tile<6, V>(K2, A, i, Bp + 2 * j, Np, acc); break;
    case 5: tile<5, V>(K2, A, i, Bp + 2 * j, Np, acc); break;
    case 4: tile<4, V>(K2, A, i, Bp + 2 * j, Np, acc); break;
    case 3: tile<3, V>(K2, A, i, Bp + 2 * j, Np, acc); break;
    case 2: tile<2, V>(K2, A, i, Bp + 2 * j, Np, acc); break;
    case 1: tile<1, V>(K2, A, i, Bp + 2 * j, Np, acc); break;
    default: return;
  }
  store_tile<Bf16, Beta>(g, C, i, rest, j, cols, acc);
}

const u16* mat(const GemmMatrix& m, int64_t o, int64_t b) {
  return static_cast<const u16*>(m.data) + o * m.outer + b * m.stride;
}

// Products [n0, n1) of g's grid, in order, on one thread; operands prefetched kAhead products ahead
// (their rows are strided lines of a larger tensor, which a 32³ product is too short to wait for).
constexpr int64_t kAhead = 2;
NL_BF16_TARGET void run_products(const MixedGemm& g, int64_t n0, int64_t n1) {
  const int64_t K2 = (g.K + 1) / 2, Np = (g.N + 31) / 32 * 32, Mp = (g.M + 31) / 32 * 32;
  thread_local std::vector<u16> bscratch, ascratch;
  if (bscratch.size() < (size_t)(K2 * Np * 2)) bscratch.resize((size_t)(K2 * Np * 2));
  const bool pack_a = g.A.trans || g.K % 2 != 0;  // else A's rows are read in place, a pair per word
  if (pack_a && ascratch.size() < (size_t)(K2 * Mp * 2)) ascratch.resize((size_t)(K2 * Mp * 2));
  const bool bf16 = g.c == DType::BFloat16, beta = g.beta != 0.0;
  const size_t csize = bf16 ? 2 : 4;
  for (int64_t n = n0; n < n1; ++n) {
    const int64_t o = n / g.batch, b = n % g.batch;
    const u16* a = mat(g.A, o, b);
    const u16* bm = mat(g.B, o, b);
    void* c = static_cast<char*>(g.C) + (o * g.outerC + b * g.strideC) * (int64_t)csize;
    if (n + kAhead < n1) {  // a later product's operands and result, while this one computes
      const int64_t o1 = (n + kAhead) / g.batch, b1 = (n + kAhead) % g.batch;
      prefetch_block(mat(g.A, o1, b1), g.A.trans ? g.K : g.M, 2 * (g.A.trans ? g.M : g.K), 2 * g.A.ld, false);
      prefetch_block(mat(g.B, o1, b1), g.B.trans ? g.N : g.K, 2 * (g.B.trans ? g.K : g.N), 2 * g.B.ld, false);
      prefetch_block(static_cast<char*>(g.C) + (o1 * g.outerC + b1 * g.strideC) * (int64_t)csize, g.M,
                     g.N * (int64_t)csize, g.ldc * (int64_t)csize, true);
    }
    u16* Bp = bscratch.data();
    if (g.B.trans)
      pack_transposed_pairs(bm, g.B.ld, g.K, g.N, Np, Bp);
    else
      pack_row_pairs(bm, g.B.ld, g.K, g.N, Np, Bp);
    PairRows A{a, g.A.ld, 2};
    if (g.A.trans) {  // stored [K, M]: pairs of rows, as B
      pack_row_pairs(a, g.A.ld, g.K, g.M, Mp, ascratch.data());
      A = {ascratch.data(), 2, 2 * Mp};
    } else if (pack_a) {  // odd K: rows copied with a zero after their last element
      u16* ap = ascratch.data();
      for (int64_t i = 0; i < g.M; ++i) {
        std::memcpy(ap + i * 2 * K2, a + i * g.A.ld, (size_t)g.K * 2);
        ap[i * 2 * K2 + g.K] = 0;
      }
      A = {ap, 2 * K2, 2};
    }
    for (int64_t j = 0; j < g.N; j += 32) {
      const bool wide = g.N - j > 16;
      if (bf16 && beta)
        wide ? strip<2, true, true>(g, K2, A, Bp, Np, c, j) : strip<1, true, true>(g, K2, A, Bp, Np, c, j);
      else if (bf16)
        wide ? strip<2, true, false>(g, K2, A, Bp, Np, c, j) : strip<1, true, false>(g, K2, A, Bp, Np, c, j);
      else if (beta)
        wide ? strip<2, false, true>(g, K2, A, Bp, Np, c, j) : strip<1, false, true>(g, K2, A, Bp, Np, c, j);
      else
        wide ? strip<2, false, false>(g, K2, A, Bp, Np, c, j) : strip<1, false, false>(g, K2, A, Bp, Np, c, j);
    }
  }
}
}  // namespace
#endif

bool small_bf16_gemm_fits(const MixedGemm& g) {
#ifdef NL_BF16_KERNELS
  return cpu_features().avx512_bf16 && !g.bias && !g.relu && g.M >= 1 && g.N >= 1 && g.K >= 1 && g.M <= 256 &&
         g.N <= 256 && g.K <= 256 && g.M * g.N * g.K <= 64 * 64 * 64;
#else
  (void)g;
  return false;
#endif
}

void small_bf16_gemm_grid(const MixedGemm& g) {
  if (!small_bf16_gemm_fits(g))
    throw std::logic_error("small_bf16_gemm_grid: " + std::to_string(g.M) + " x " + std::to_string(g.N) + " x " +
                           std::to_string(g.K) +
                           " is not a small bfloat16 product on this CPU (check small_bf16_gemm_fits)");
#ifdef NL_BF16_KERNELS
  const int64_t total = g.outer * g.batch;
  // One contiguous share of the grid per thread, threads only with at least kParallelGrain multiply-adds each.
  const int nt =
      (int)std::min<int64_t>(std::max(1, omp_get_max_threads()), total * g.M * g.N * g.K / (kParallelGrain * 32));
  if (nt <= 1) {
    run_products(g, 0, total);
  } else {
#pragma omp parallel for schedule(static, 1) num_threads(nt)
    for (int t = 0; t < nt; ++t) run_products(g, total * t / nt, total * (t + 1) / nt);
  }
#endif
}

}  // namespace nl::cpu
