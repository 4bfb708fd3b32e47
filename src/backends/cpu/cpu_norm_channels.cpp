// The LayerNorm family over channel groups of NCHW images (LN-G-Position, Ni et al. 2024; ni-pn-details.md
// §4): cpu_norm.cpp's forward y = (x - mu)/D and closed-form backward (Xu et al. 2019, appendix B) per
// (image, group, pixel), computed where the values lie. A group's n = C/G values of one pixel sit P = H·W
// apart, and neighbouring pixels are neighbours in memory, so a tile of pixels is normalised side by side
// in the vector lanes, each channel of the group one contiguous run of the tile. Without this kernel LN-G
// permuted the image to rows of n values (a copy each way, forward and backward), ran a LayerNorm over
// those short rows and applied the affine in two more passes.
// Per pixel the arithmetic is the row kernel's (mean summed in double and split as m + lo, d = (x - m) - lo,
// the squares in T, the per-pixel scalars in double); the summation order over the n values differs, so
// the results equal the rows path to rounding, not bit for bit. Each image's parameter-gradient sums are
// kept apart and added in image order: the bits do not depend on the thread count.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/flag_dispatch.h"
#include "backends/cpu/threads.h"
#include "backends/profiler.h"

namespace nl {

namespace {
constexpr int64_t kTile = 64;  // pixels normalised side by side: a group's tile stays in L1 (n ≤ 64: 16 KiB)

// The [N, C, P] layout, groups and per-group size.
struct ChannelGroups {
  int64_t N, C, P, G, n;
  ChannelGroups(const Desc& x, int64_t groups)
      : N(x.shape[0]), C(x.shape[1]), P(x.shape[2]), G(groups), n(x.shape[1] / groups) {}
  int64_t numel() const { return N * C * P; }
};

// The mean of each of np pixels over the n channels starting at x0 (channel j at x0 + j·P), summed in
// double and split as m + lo (cpu_norm.cpp's row_mean); 0 without centring.
template <typename T>
void tile_mean(const T* x0, int64_t P, int64_t n, int64_t np, bool center, T* m, T* lo) {
  double mu[kTile] = {};
  if (center)
    for (int64_t j = 0; j < n; ++j) {
      const T* xr = x0 + j * P;
#pragma omp simd
      for (int64_t p = 0; p < np; ++p) mu[p] += (double)xr[p];
    }
  for (int64_t p = 0; p < np; ++p) {
    const double v = mu[p] / (double)n;
    m[p] = T(v), lo[p] = T(v - (double)m[p]);
  }
}
}  // namespace

void CpuBackend::layer_norm_channels(const Desc& y, const Desc& mean, const Desc& rstd, const Desc& x,
                                     const Desc& weight, const Desc& bias, int64_t groups, const NormKernelOpts& o) {
  prof::Scope prof_scope(prof::Cat::Norm);
  const ChannelGroups s(x, groups);
  if (s.numel() == 0) return;
  const double nv = o.unbiased ? (double)(s.n - 1) : (double)s.n;
  dispatch_floating(x.dtype, "layer_norm_channels", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = static_cast<const T*>(x.data);
    const T* wp = static_cast<const T*>(weight.data);
    const T* bp = static_cast<const T*>(bias.data);
    T* yp = static_cast<T*>(y.data);
    T* mp = static_cast<T*>(mean.data);
    T* rp = static_cast<T*>(rstd.data);
    const int64_t items = s.N * s.G, n = s.n, P = s.P;
#pragma omp parallel for schedule(static) if (s.numel() >= kParallelGrain)
    for (int64_t item = 0; item < items; ++item) {  // item = image · G + group: channels g·n .. g·n + n - 1
      const int64_t c0 = (item % s.G) * n;
      const T* xg = xp + item * n * P;
      T* yg = yp + item * n * P;
      for (int64_t p0 = 0; p0 < P; p0 += kTile) {
        const int64_t np = std::min(kTile, P - p0);
        T m[kTile], lo[kTile], ss[kTile] = {}, inv[kTile];
        tile_mean(xg + p0, P, n, np, o.center, m, lo);
        for (int64_t j = 0; j < n; ++j) {
          const T* xr = xg + j * P + p0;
#pragma omp simd
          for (int64_t p = 0; p < np; ++p) {
            const T d = (xr[p] - m[p]) - lo[p];
            ss[p] += d * d;
          }
        }
        for (int64_t p = 0; p < np; ++p) {
          const double var = (double)ss[p] / nv;
          inv[p] = T(1.0 / (o.eps_inside ? std::sqrt(var + o.eps) : std::sqrt(var) + o.eps));
        }
        for (int64_t j = 0; j < n; ++j) {
          const T *xr = xg + j * P + p0, w = wp ? wp[c0 + j] : T(1), b = bp ? bp[c0 + j] : T(0);
          T* yr = yg + j * P + p0;
          if (wp)
#pragma omp simd
            for (int64_t p = 0; p < np; ++p) yr[p] = ((xr[p] - m[p]) - lo[p]) * inv[p] * w + b;
          else
#pragma omp simd
            for (int64_t p = 0; p < np; ++p) yr[p] = ((xr[p] - m[p]) - lo[p]) * inv[p] + b;
        }
        std::copy(m, m + np, mp + item * P + p0);
        std::copy(inv, inv + np, rp + item * P + p0);
      }
    }
  });
}

namespace {
// One channel's run of a tile in the backward's first pass: d = (x - m) - lo, g = w ⊙ dL/dy, the per-pixel
// sums Σ g and Σ g·d, and (Cols) the channel's Σ dL/dy ⊙ d/D and Σ dL/dy over the run. The branches are
// template arguments so that the loop vectorises.
template <typename T, bool Cols, bool W>
void channel_pass(int64_t np, const T* __restrict xr, const T* __restrict gr, T w, const T* m, const T* lo,
                  const T* inv, T* __restrict gsum, T* __restrict S, double& dw, double& db) {
  T sw = 0, sb = 0;
#pragma omp simd reduction(+ : sw, sb)
  for (int64_t p = 0; p < np; ++p) {
    const T d = (xr[p] - m[p]) - lo[p];
    const T gi = W ? gr[p] * w : gr[p];
    gsum[p] += gi;
    S[p] += gi * d;
    if constexpr (Cols) {
      sw += gr[p] * (d * inv[p]);
      sb += gr[p];
    }
  }
  dw += (double)sw, db += (double)sb;
}
}  // namespace

void CpuBackend::layer_norm_channels_backward(const Desc& gx, const Desc& gweight, const Desc& gbias, const Desc& gy,
                                              const Desc& x, const Desc& mean, const Desc& rstd, const Desc& weight,
                                              int64_t groups, const NormKernelOpts& o, bool accumulate) {
  prof::Scope prof_scope(prof::Cat::Norm);
  const ChannelGroups s(x, groups);
  if (s.numel() == 0) return;
  const double nv = o.unbiased ? (double)(s.n - 1) : (double)s.n;
  const bool through_mean = o.center && !o.detach_mean;
  (void)mean;  // recomputed in double per pixel, as the rows kernel does (cpu_norm.cpp)
  const bool cols = gweight.data != nullptr || gbias.data != nullptr;
  // Per image and channel: Σ over its pixels of dL/dy ⊙ (x - mu)/D and of dL/dy, added over images in order.
  std::vector<double> part(cols ? (size_t)(s.N * s.C * 2) : 0, 0.0);
  dispatch_floating(x.dtype, "layer_norm_channels backward", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = static_cast<const T*>(x.data);
    const T* gp = static_cast<const T*>(gy.data);
    const T* rp = static_cast<const T*>(rstd.data);
    const T* wp = static_cast<const T*>(weight.data);
    T* op = static_cast<T*>(gx.data);
    const int64_t items = s.N * s.G, n = s.n, P = s.P;
    auto pass = [&](int64_t np, const T* xr, const T* gr, T w, const T* m, const T* lo, const T* inv, T* gsum,
                    T* S, double* acc) {
      double unused[2] = {0, 0};
      double* a = acc ? acc : unused;
      cpu::with_flags(acc != nullptr, wp != nullptr, [&](auto cols_flag, auto w_flag) {
        channel_pass<T, decltype(cols_flag)::value, decltype(w_flag)::value>(np, xr, gr, w, m, lo, inv, gsum, S,
                                                                             a[0], a[1]);
      });
    };
#pragma omp parallel for schedule(static) if (s.numel() >= kParallelGrain)
    for (int64_t item = 0; item < items; ++item) {
      const int64_t image = item / s.G, c0 = (item % s.G) * n;
      const T* xg = xp + item * n * P;
      const T* gg = gp + item * n * P;
      T* og = op + item * n * P;
      for (int64_t p0 = 0; p0 < P; p0 += kTile) {
        const int64_t np = std::min(kTile, P - p0);
        T m[kTile], lo[kTile], gsum[kTile] = {}, S[kTile] = {}, gbar[kTile], coef[kTile];
        const T* inv = rp + item * P + p0;
        tile_mean(xg + p0, P, n, np, o.center, m, lo);
        for (int64_t j = 0; j < n; ++j)
          pass(np, xg + j * P + p0, gg + j * P + p0, wp ? wp[c0 + j] : T(1), m, lo, inv, gsum, S,
               cols ? &part[(size_t)((image * s.C + c0 + j) * 2)] : nullptr);
        for (int64_t p = 0; p < np; ++p) {
          gbar[p] = through_mean ? T((double)gsum[p] / (double)n) : T(0);
          double c = 0;  // multiplies d in the std term
          if (!o.detach_std) {
            const double D = 1.0 / (double)inv[p], sprime = o.eps_inside ? D : D - o.eps;
            c = sprime > 0 ? (double)S[p] / (nv * sprime * D * D) : 0.0;
          }
          coef[p] = T(c);
        }
        for (int64_t j = 0; j < n; ++j) {
          const T *xr = xg + j * P + p0, *gr = gg + j * P + p0, w = wp ? wp[c0 + j] : T(1);
          T* out = og + j * P + p0;
          if (accumulate)  // out holds the gradient summed so far: one add, as a separate pass would make
#pragma omp simd
            for (int64_t p = 0; p < np; ++p)
              out[p] = out[p] + ((gr[p] * w - gbar[p]) * inv[p] - coef[p] * ((xr[p] - m[p]) - lo[p]));
          else
#pragma omp simd
            for (int64_t p = 0; p < np; ++p)
              out[p] = (gr[p] * w - gbar[p]) * inv[p] - coef[p] * ((xr[p] - m[p]) - lo[p]);
        }
      }
    }
    for (int64_t c = 0; c < s.C && cols; ++c) {
      double dw = 0, db = 0;
      for (int64_t image = 0; image < s.N; ++image) {
        dw += part[(size_t)((image * s.C + c) * 2)];
        db += part[(size_t)((image * s.C + c) * 2 + 1)];
      }
      if (gweight.data) static_cast<T*>(gweight.data)[c] = T(dw);
      if (gbias.data) static_cast<T*>(gbias.data)[c] = T(db);
    }
  });
}

}  // namespace nl
