// im2col / col2im for convolution as GEMM, and 2-D max pooling, on contiguous NCHW tensors.
// Column layout: cols[(c*kh + i)*kw + j, (n*OH + oh)*OW + ow], so one GEMM covers the whole batch.
#include <limits>
#include <stdexcept>

#include "backends/cpu/cpu_backend.h"
#include "backends/profiler.h"
#include "backends/cpu/threads.h"

namespace nl {

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
      if (g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 && g.pw == 0) {
        // The common 2x2/2 window without padding: no bounds checks, four loads per output.
        for (int64_t oh = 0; oh < OH; ++oh) {
          const T* __restrict r0 = xp + 2 * oh * g.W;
          const T* __restrict r1 = r0 + g.W;
          T* __restrict yo = y + (p * OH + oh) * OW;
          int64_t* __restrict io = ix + (p * OH + oh) * OW;
          const int64_t base = 2 * oh * g.W;
          // Branch-free: data-dependent branches mispredicted on every other window (this loop was
          // 14% of a training step). Ties keep the first maximum in raster order, as PyTorch does.
          for (int64_t ow = 0; ow < OW; ++ow) {
            const T a = r0[2 * ow], b = r0[2 * ow + 1], c = r1[2 * ow], d = r1[2 * ow + 1];
            const bool i1 = b > a, i2 = d > c;
            const T m1 = i1 ? b : a, m2 = i2 ? d : c;
            const bool i3 = m2 > m1;
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
