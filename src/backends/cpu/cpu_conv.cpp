// im2col / col2im for convolution as GEMM, and 2-D max pooling, on contiguous NCHW tensors.
// Column layout: cols[(c*kh + i)*kw + j, (n*OH + oh)*OW + ow], so one GEMM covers the whole batch.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <type_traits>
#ifdef __AVX512F__
#include <immintrin.h>
#endif

#include "backends/cpu/cpu_backend.h"
#include "backends/profiler.h"
#include "backends/cpu/threads.h"

namespace nl {
namespace {

#ifdef __AVX512F__
// 2x2 stride-2 max pooling (no padding) of one float plane with AVX-512, 16 outputs per step. It makes
// exactly the comparisons of the scalar loop (b > a, d > c, then bottom > top; all ordered), so ties keep
// the first maximum in raster order and NaNs behave as before. Offsets are int32 (needs H*W < 2^31).
inline void maxpool2x2_plane_avx512(const float* xp, float* yp, int64_t* ip, int64_t W, int64_t OH, int64_t OW) {
  const __m512i one = _mm512_set1_epi32(1), w0 = _mm512_set1_epi32((int)W), w1 = _mm512_set1_epi32((int)W + 1);
  // a, b, c, d: the window's top-left, top-right, bottom-left, bottom-right; tl: top-left offset in the plane.
  auto window = [&](__m512 a, __m512 b, __m512 c, __m512 d, __m512i tl, __m512& m, __m512i& idx) {
    // "later > current or later is NaN" (PyTorch's rule: a NaN in the window is the maximum, the last one wins)
    auto later_wins = [](__m512 later, __m512 cur) {
      return (__mmask16)(_mm512_cmp_ps_mask(later, cur, _CMP_GT_OQ) | _mm512_cmp_ps_mask(later, later, _CMP_UNORD_Q));
    };
    const __mmask16 i1 = later_wins(b, a), i2 = later_wins(d, c);
    const __m512 m1 = _mm512_mask_blend_ps(i1, a, b), m2 = _mm512_mask_blend_ps(i2, c, d);
    const __mmask16 i3 = later_wins(m2, m1);
    m = _mm512_mask_blend_ps(i3, m1, m2);
    const __m512i top = _mm512_maskz_mov_epi32(i1, one), bot = _mm512_mask_mov_epi32(w0, i2, w1);
    idx = _mm512_add_epi32(tl, _mm512_mask_blend_epi32(i3, top, bot));
  };
  auto store_idx = [](int64_t* io, __mmask16 k, __m512i idx) {
    // (the maskz forms: GCC 12 warns about the unmasked ones' undefined pass-through operand)
    const __m256i lo = _mm512_maskz_extracti64x4_epi64((__mmask8)0xF, idx, 0), hi = _mm512_maskz_extracti64x4_epi64((__mmask8)0xF, idx, 1);
    _mm512_mask_storeu_epi64(io, (__mmask8)k, _mm512_maskz_cvtepi32_epi64((__mmask8)0xFF, lo));
    _mm512_mask_storeu_epi64(io + 8, (__mmask8)(k >> 8), _mm512_maskz_cvtepi32_epi64((__mmask8)0xFF, hi));
  };
  int64_t oh = 0;
  const int64_t R = (OW < 16 && 16 % OW == 0 && W == 2 * OW) ? 16 / OW : 0;
  if (R > 1) {
    // Narrow planes: R row pairs are 64 contiguous floats and give 16 contiguous outputs. Lane l reads
    // row pair l/OW, column pair l%OW; lanes 8..15 repeat lanes 0..7 on the upper 32 floats.
    alignas(64) int32_t pat[16];
    for (int l = 0; l < 16; ++l) pat[l] = (int32_t)((l / OW) * 2 * W + 2 * (l % OW));
    const __m512i tl0 = _mm512_load_si512(pat);
    const __m512i ia = tl0, ib = _mm512_add_epi32(tl0, one), ic = _mm512_add_epi32(tl0, w0),
                  id = _mm512_add_epi32(tl0, w1);  // permutex2var uses the low 5 bits: offsets mod 32
    auto pick = [](__m512 z0, __m512 z1, __m512 z2, __m512 z3, __m512i i) {
      return _mm512_mask_blend_ps((__mmask16)0xFF00, _mm512_permutex2var_ps(z0, i, z1), _mm512_permutex2var_ps(z2, i, z3));
    };
    for (; oh + R <= OH; oh += R) {
      const float* blk = xp + 2 * oh * W;
      const __m512 z0 = _mm512_loadu_ps(blk), z1 = _mm512_loadu_ps(blk + 16), z2 = _mm512_loadu_ps(blk + 32),
                   z3 = _mm512_loadu_ps(blk + 48);
      __m512 m;
      __m512i idx;
      window(pick(z0, z1, z2, z3, ia), pick(z0, z1, z2, z3, ib), pick(z0, z1, z2, z3, ic), pick(z0, z1, z2, z3, id),
             _mm512_add_epi32(tl0, _mm512_set1_epi32((int)(2 * oh * W))), m, idx);
      _mm512_storeu_ps(yp + oh * OW, m);
      store_idx(ip + oh * OW, (__mmask16)0xFFFF, idx);
    }
  }
  // One row pair at a time, 16 outputs (32 inputs per row) per step, the last step masked.
  const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i od = _mm512_add_epi32(ev, one);
  for (; oh < OH; ++oh) {
    const float* r0 = xp + 2 * oh * W;
    const float* r1 = r0 + W;
    for (int64_t ow = 0; ow < OW; ow += 16) {
      const int64_t n = std::min<int64_t>(16, OW - ow), nin = 2 * n;
      const __mmask16 k = (__mmask16)((1u << n) - 1);
      const __mmask16 klo = (__mmask16)(nin >= 16 ? 0xFFFFu : (1u << nin) - 1);
      const __mmask16 khi = (__mmask16)(nin > 16 ? (1u << (nin - 16)) - 1 : 0u);
      const __m512 t0 = _mm512_maskz_loadu_ps(klo, r0 + 2 * ow), t1 = _mm512_maskz_loadu_ps(khi, r0 + 2 * ow + 16);
      const __m512 b0 = _mm512_maskz_loadu_ps(klo, r1 + 2 * ow), b1 = _mm512_maskz_loadu_ps(khi, r1 + 2 * ow + 16);
      __m512 m;
      __m512i idx;
      window(_mm512_permutex2var_ps(t0, ev, t1), _mm512_permutex2var_ps(t0, od, t1), _mm512_permutex2var_ps(b0, ev, b1),
             _mm512_permutex2var_ps(b0, od, b1), _mm512_add_epi32(ev, _mm512_set1_epi32((int)(2 * oh * W + 2 * ow))), m,
             idx);
      _mm512_mask_storeu_ps(yp + oh * OW + ow, k, m);
      store_idx(ip + oh * OW + ow, k, idx);
    }
  }
}
#endif

// Copies n elements; for float with AVX-512, 16 lanes at a time with a masked tail (conv rows are short:
// 24 or 8 floats, where a memcpy call costs more than the copy).
template <typename T>
inline void copy_row(T* __restrict d, const T* __restrict s, int64_t n) {
#ifdef __AVX512F__
  if constexpr (std::is_same_v<T, float>) {
    int64_t k = 0;
    for (; k + 16 <= n; k += 16) _mm512_storeu_ps(d + k, _mm512_loadu_ps(s + k));
    if (k + 8 <= n) {  // unmasked 8-wide move: OW = 8 and 24 need no masked store
      _mm256_storeu_ps(d + k, _mm256_loadu_ps(s + k));
      k += 8;
    }
    if (k < n) {
      const __mmask16 m = (__mmask16)((1u << (n - k)) - 1);
      _mm512_mask_storeu_ps(d + k, m, _mm512_maskz_loadu_ps(m, s + k));
    }
    return;
  }
#endif
  for (int64_t k = 0; k < n; ++k) d[k] = s[k];
}

}  // namespace


void CpuBackend::im2col(const Desc& cols, const Desc& in, const Conv2dGeom& g) {
  prof::Scope prof_scope(prof::Cat::Conv);
  const int64_t OH = g.OH(), OW = g.OW(), L = g.N * OH * OW, rows = g.C * g.kh * g.kw;
  dispatch_floating(in.dtype, "conv2d", [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(in.data);
    T* col = static_cast<T*>(cols.data);
#pragma omp parallel for schedule(static) if (rows * L >= kParallelGrain)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t c = r / (g.kh * g.kw), i = (r / g.kw) % g.kh, j = r % g.kw;
      T* dst = col + r * L;
      if (g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0) {
        // Unit stride, no padding: every source row is in bounds and OW contiguous elements.
        const int64_t N = g.N, W = g.W, ow_n = OW, oh_n = OH, plane = g.H * W, cstride = g.C * plane;
        const T* src = x + c * plane + i * W + j;
        for (int64_t n = 0; n < N; ++n, src += cstride)
          for (int64_t oh = 0; oh < oh_n; ++oh, dst += ow_n) copy_row(dst, src + oh * W, ow_n);
        continue;
      }
      for (int64_t n = 0; n < g.N; ++n) {
        const T* plane = x + (n * g.C + c) * g.H * g.W;
        for (int64_t oh = 0; oh < OH; ++oh) {
          const int64_t h = oh * g.sh - g.ph + i;
          T* d = dst + (n * OH + oh) * OW;
          if (h < 0 || h >= g.H) {
            for (int64_t ow = 0; ow < OW; ++ow) d[ow] = T(0);
            continue;
          }
          const T* src = plane + h * g.W;
          if (g.sw == 1 && g.pw == 0) {
            for (int64_t ow = 0; ow < OW; ++ow) d[ow] = src[ow + j];
          } else {
            for (int64_t ow = 0; ow < OW; ++ow) {
              const int64_t w = ow * g.sw - g.pw + j;
              d[ow] = (w >= 0 && w < g.W) ? src[w] : T(0);
            }
          }
        }
      }
    }
  });
}

void CpuBackend::col2im(const Desc& gin, const Desc& cols, const Conv2dGeom& g) {
  prof::Scope prof_scope(prof::Cat::Conv);
  const int64_t OH = g.OH(), OW = g.OW(), L = g.N * OH * OW;
  dispatch_floating(gin.dtype, "conv2d backward", [&](auto tag) {
    using T = decltype(tag);
    T* gx = static_cast<T*>(gin.data);
    const T* col = static_cast<const T*>(cols.data);
#pragma omp parallel for schedule(static) if (g.C * g.kh * g.kw * L >= kParallelGrain)
    for (int64_t c = 0; c < g.C; ++c) {
#ifdef __AVX512F__
      if constexpr (std::is_same_v<T, float>) {
        if (g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 && g.W <= 16) {
          // Unit stride, no padding, planes at most 16 wide: each input row is accumulated in a register
          // from the kh*kw shifted column rows (a masked load at s - j puts s[ow] in lane ow + j), then
          // stored once. Per element the terms are added in the same (i, j) order as below.
          const int64_t N = g.N, H = g.H, W = g.W, C = g.C, kh = g.kh, kwid = g.kw, ohw = OH * OW;
          const __mmask16 kw_row = (__mmask16)((1u << W) - 1), k_ow = (__mmask16)((1u << OW) - 1);
          // NB images at once: independent add chains hide the add latency (the chain per row is serial).
          auto rows = [&](auto nb_tag, int64_t n) {
            constexpr int NB = decltype(nb_tag)::value;
            T* plane = gx + (n * C + c) * H * W;
            for (int64_t h = 0; h < H; ++h) {
              // Rows but the last few: whole 16-lane loads and stores (lanes past the row are stored back
              // unchanged; the next rows are this thread's too). A load overlapping an earlier masked
              // store waits for it (Zen 4), and row h+1 starts inside row h's 16 lanes.
              const bool full = h * W + 16 <= H * W;
              __m512 acc[NB];
              for (int q = 0; q < NB; ++q)
                acc[q] = full ? _mm512_loadu_ps(plane + q * C * H * W + h * W)
                              : _mm512_maskz_loadu_ps(kw_row, plane + q * C * H * W + h * W);
              for (int64_t i = std::max<int64_t>(0, h - OH + 1); i < kh && i <= h; ++i) {
                const T* s = col + (c * kh + i) * kwid * L + (n * OH + h - i) * OW;
                for (int64_t j = 0; j < kwid; ++j, s += L) {
                  const __mmask16 k = (__mmask16)(k_ow << j);
                  for (int q = 0; q < NB; ++q)
                    acc[q] = _mm512_mask_add_ps(acc[q], k, acc[q], _mm512_maskz_loadu_ps(k, s + q * ohw - j));
                }
              }
              for (int q = 0; q < NB; ++q) {
                if (full)
                  _mm512_storeu_ps(plane + q * C * H * W + h * W, acc[q]);
                else
                  _mm512_mask_storeu_ps(plane + q * C * H * W + h * W, kw_row, acc[q]);
              }
            }
          };
          int64_t n = 0;
          for (; n + 4 <= N; n += 4) rows(std::integral_constant<int, 4>{}, n);
          for (; n < N; ++n) rows(std::integral_constant<int, 1>{}, n);
          continue;
        }
      }
#endif
      for (int64_t i = 0; i < g.kh; ++i)
        for (int64_t j = 0; j < g.kw; ++j) {
          const T* src = col + ((c * g.kh + i) * g.kw + j) * L;
          for (int64_t n = 0; n < g.N; ++n) {
            T* plane = gx + (n * g.C + c) * g.H * g.W;
            for (int64_t oh = 0; oh < OH; ++oh) {
              const int64_t h = oh * g.sh - g.ph + i;
              if (h < 0 || h >= g.H) continue;
              const T* s = src + (n * OH + oh) * OW;
              T* d = plane + h * g.W;
              if (g.sw == 1 && g.pw == 0) {  // unit stride, no padding: a contiguous, vectorisable add
                T* dj = d + j;
                for (int64_t ow = 0; ow < OW; ++ow) dj[ow] += s[ow];
                continue;
              }
              for (int64_t ow = 0; ow < OW; ++ow) {
                const int64_t w = ow * g.sw - g.pw + j;
                if (w >= 0 && w < g.W) d[w] += s[ow];
              }
            }
          }
        }
    }
  });
}

void CpuBackend::maxpool2d(const Desc& out, const Desc& idx, const Desc& in, const Conv2dGeom& g) {
  prof::Scope prof_scope(prof::Cat::Pool);
  const int64_t OH = g.OH(), OW = g.OW(), planes = g.N * g.C;
  dispatch_floating(in.dtype, "max_pool2d", [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(in.data);
    T* y = static_cast<T*>(out.data);
    int64_t* ix = static_cast<int64_t*>(idx.data);
#pragma omp parallel for schedule(static) if (planes * g.H * g.W >= kParallelGrain)
    for (int64_t p = 0; p < planes; ++p) {
      const T* xp = x + p * g.H * g.W;
#ifdef __AVX512F__
      if constexpr (std::is_same_v<T, float>) {
        if (g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 && g.pw == 0 &&
            g.H * g.W < (int64_t(1) << 31)) {
          maxpool2x2_plane_avx512(xp, y + p * OH * OW, ix + p * OH * OW, g.W, OH, OW);
          continue;
        }
      }
#endif
      if (g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 && g.pw == 0) {
        // The common 2x2/2 window without padding: no bounds checks, four loads per output.
        for (int64_t oh = 0; oh < OH; ++oh) {
          const T* __restrict r0 = xp + 2 * oh * g.W;
          const T* __restrict r1 = r0 + g.W;
          T* __restrict yo = y + (p * OH + oh) * OW;
          int64_t* __restrict io = ix + (p * OH + oh) * OW;
          const int64_t base = 2 * oh * g.W;
          // Branch-free: data-dependent branches mispredicted on every other window (this loop was
          // 14% of a training step). Ties keep the first maximum in raster order and a NaN is the
          // maximum (the last NaN wins), as PyTorch does: a later value wins if greater or NaN.
          for (int64_t ow = 0; ow < OW; ++ow) {
            const T a = r0[2 * ow], b = r0[2 * ow + 1], c = r1[2 * ow], d = r1[2 * ow + 1];
            const bool i1 = (b > a) | (b != b), i2 = (d > c) | (d != d);
            const T m1 = i1 ? b : a, m2 = i2 ? d : c;
            const bool i3 = (m2 > m1) | (m2 != m2);
            yo[ow] = i3 ? m2 : m1;
            io[ow] = base + 2 * ow + (i3 ? g.W + (int64_t)i2 : (int64_t)i1);
          }
        }
        continue;
      }
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          T best = -std::numeric_limits<T>::infinity();
          int64_t bi = -1;
          for (int64_t i = 0; i < g.kh; ++i) {
            const int64_t h = oh * g.sh - g.ph + i;
            if (h < 0 || h >= g.H) continue;
            for (int64_t j = 0; j < g.kw; ++j) {
              const int64_t w = ow * g.sw - g.pw + j;
              if (w < 0 || w >= g.W) continue;
              const T v = xp[h * g.W + w];
              if (v > best || bi < 0 || v != v) {
                best = v;
                bi = h * g.W + w;
              }
            }
          }
          y[(p * OH + oh) * OW + ow] = best;
          ix[(p * OH + oh) * OW + ow] = bi;
        }
    }
  });
}

void CpuBackend::maxpool2d_backward(const Desc& gin, const Desc& gout, const Desc& idx, const Conv2dGeom& g) {
  prof::Scope prof_scope(prof::Cat::Pool);
  const int64_t OHW = g.OH() * g.OW(), planes = g.N * g.C;
  dispatch_floating(gin.dtype, "max_pool2d backward", [&](auto tag) {
    using T = decltype(tag);
    T* gx = static_cast<T*>(gin.data);
    const T* gy = static_cast<const T*>(gout.data);
    const int64_t* ix = static_cast<const int64_t*>(idx.data);
#pragma omp parallel for schedule(static) if (planes * OHW >= kParallelGrain)
    for (int64_t p = 0; p < planes; ++p) {
      T* gp = gx + p * g.H * g.W;
      for (int64_t k = 0; k < OHW; ++k) gp[ix[p * OHW + k]] += gy[p * OHW + k];
    }
  });
}

}  // namespace nl
