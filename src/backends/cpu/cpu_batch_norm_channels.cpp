// BatchNorm's training step over the channels of NCHW images (Ioffe & Szegedy 2015, Alg. 1 and its
// backward), where the values lie: channel c is N runs of P = H·W contiguous values, one per image. Without
// this kernel BatchNorm permuted the image to rows of C channels, took the statistics with a dozen
// elementwise ops and reductions, and permuted back, forward and backward.
// Every per-channel sum is taken in double in one fixed order (images in order, each run in the lanes of
// an `omp simd` reduction); a channel belongs to one thread, so the bits do not depend on the thread count.
#include <omp.h>

#include <cmath>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/threads.h"
#include "backends/profiler.h"

namespace nl {

namespace {
// [N, C, P] and the offset of channel c's run in image n.
struct ChannelRuns {
  int64_t N, C, P;
  explicit ChannelRuns(const Desc& x) : N(x.shape[0]), C(x.shape[1]), P(x.shape[2]) {}
  int64_t at(int64_t n, int64_t c) const { return (n * C + c) * P; }
  int64_t numel() const { return N * C * P; }
};
}  // namespace

void CpuBackend::batch_norm_channels(const Desc& y, const Desc& mean, const Desc& var, const Desc& rstd, const Desc& x,
                                     const Desc& weight, const Desc& bias, double eps) {
  prof::Scope prof_scope(prof::Cat::Norm);
  const ChannelRuns s(x);
  if (s.numel() == 0) return;
  const double count = (double)(s.N * s.P);
  dispatch_floating(x.dtype, "batch_norm_channels", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = static_cast<const T*>(x.data);
    const T* wp = static_cast<const T*>(weight.data);
    const T* bp = static_cast<const T*>(bias.data);
    T* yp = static_cast<T*>(y.data);
#pragma omp parallel for schedule(static) if (s.numel() >= kParallelGrain)
    for (int64_t c = 0; c < s.C; ++c) {
      double sum = 0;
      for (int64_t n = 0; n < s.N; ++n) {
        const T* xr = xp + s.at(n, c);
#pragma omp simd reduction(+ : sum)
        for (int64_t p = 0; p < s.P; ++p) sum += (double)xr[p];
      }
      const double mu = sum / count;
      double ss = 0;  // Σ (x - mu)² in double: the two-pass variance
      for (int64_t n = 0; n < s.N; ++n) {
        const T* xr = xp + s.at(n, c);
#pragma omp simd reduction(+ : ss)
        for (int64_t p = 0; p < s.P; ++p) {
          const double d = (double)xr[p] - mu;
          ss += d * d;
        }
      }
      const double v = ss / count, r = 1.0 / std::sqrt(v + eps);
      // y = (x - mu)·(w·rstd) + b, the scale and shift per channel in T (as PyTorch's CPU kernel folds them)
      const T m = T(mu), scale = T((wp ? (double)wp[c] : 1.0) * r), shift = bp ? bp[c] : T(0);
      for (int64_t n = 0; n < s.N; ++n) {
        const T* xr = xp + s.at(n, c);
        T* yr = yp + s.at(n, c);
#pragma omp simd
        for (int64_t p = 0; p < s.P; ++p) yr[p] = (xr[p] - m) * scale + shift;
      }
      static_cast<T*>(mean.data)[c] = m;
      static_cast<T*>(var.data)[c] = T(v);
      static_cast<T*>(rstd.data)[c] = T(r);
    }
  });
}

void CpuBackend::batch_norm_channels_backward(const Desc& gx, const Desc& gweight, const Desc& gbias, const Desc& gy,
                                              const Desc& x, const Desc& mean, const Desc& rstd, const Desc& weight,
                                              bool accumulate) {
  prof::Scope prof_scope(prof::Cat::Norm);
  const ChannelRuns s(x);
  if (s.numel() == 0) return;
  const double count = (double)(s.N * s.P);
  dispatch_floating(x.dtype, "batch_norm_channels backward", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = static_cast<const T*>(x.data);
    const T* gp = static_cast<const T*>(gy.data);
    const T* wp = static_cast<const T*>(weight.data);
    T* op = static_cast<T*>(gx.data);
#pragma omp parallel for schedule(static) if (s.numel() >= kParallelGrain)
    for (int64_t c = 0; c < s.C; ++c) {
      const double mu = (double)static_cast<const T*>(mean.data)[c], r = (double)static_cast<const T*>(rstd.data)[c];
      double sg = 0, sgd = 0;  // Σ gy and Σ gy·(x - mu)
      for (int64_t n = 0; n < s.N; ++n) {
        const T *xr = xp + s.at(n, c), *gr = gp + s.at(n, c);
#pragma omp simd reduction(+ : sg, sgd)
        for (int64_t p = 0; p < s.P; ++p) {
          sg += (double)gr[p];
          sgd += (double)gr[p] * ((double)xr[p] - mu);
        }
      }
      if (gweight.data) static_cast<T*>(gweight.data)[c] = T(sgd * r);
      if (gbias.data) static_cast<T*>(gbias.data)[c] = T(sg);
      // gx = w·r·(gy - mean(gy) - (x - mu)·r²·mean(gy·(x - mu))) = a·gy + b·(x - mu) + k per channel
      const double w = wp ? (double)wp[c] : 1.0, a = w * r;
      const T ta = T(a), tb = T(-a * r * r * sgd / count), tk = T(-a * sg / count), m = T(mu);
      for (int64_t n = 0; n < s.N; ++n) {
        const T *xr = xp + s.at(n, c), *gr = gp + s.at(n, c);
        T* out = op + s.at(n, c);
        if (accumulate)  // out holds the gradient summed so far: one add, as a separate pass would make
#pragma omp simd
          for (int64_t p = 0; p < s.P; ++p) out[p] = out[p] + (ta * gr[p] + tb * (xr[p] - m) + tk);
        else
#pragma omp simd
          for (int64_t p = 0; p < s.P; ++p) out[p] = ta * gr[p] + tb * (xr[p] - m) + tk;
      }
    }
  });
}

}  // namespace nl
