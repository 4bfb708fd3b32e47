// Fused Adam / AdamW update (Kingma & Ba 2015, Algorithm 1; Loshchilov & Hutter 2019, Algorithm 2),
// matching torch.optim.Adam/AdamW: p -= lr * m_hat / (sqrt(v_hat) + eps).
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "backends/cpu/cpu_backend.h"
#include "backends/profiler.h"
#include "backends/cpu/threads.h"

namespace nl {

namespace {

template <typename T>
void adam_range(T* __restrict p, const T* __restrict g, T* __restrict mp, T* __restrict vp, const T b1, const T b2,
                const T eps, const T l2, const T decay, const T step, const T inv_sqrt_bc2, int64_t lo, int64_t hi) {
#pragma omp simd
  for (int64_t i = lo; i < hi; ++i) {
    const T gi = g[i] + l2 * p[i];
    const T mi = b1 * mp[i] + (T(1) - b1) * gi;
    const T vi = b2 * vp[i] + (T(1) - b2) * gi * gi;
    mp[i] = mi;
    vp[i] = vi;
    p[i] = p[i] * decay - step * mi / (std::sqrt(vi) * inv_sqrt_bc2 + eps);
  }
}

}  // namespace

void CpuBackend::adam_step(const Desc& param, const Desc& grad, const Desc& m, const Desc& v,
                           const AdamKernelOpts& o) {
  prof::Scope prof_scope(prof::Cat::Optimizer);
  const int64_t n = param.numel();
  const double bc1 = 1.0 - std::pow(o.beta1, (double)o.step), bc2 = 1.0 - std::pow(o.beta2, (double)o.step);
  dispatch_floating(param.dtype, "adam", [&](auto tag) {
    using T = decltype(tag);
    T* __restrict p = static_cast<T*>(param.data);
    const T* __restrict g = static_cast<const T*>(grad.data);
    T* __restrict mp = static_cast<T*>(m.data);
    T* __restrict vp = static_cast<T*>(v.data);
    const T b1 = T(o.beta1), b2 = T(o.beta2), eps = T(o.eps);
    const T l2 = o.decoupled ? T(0) : T(o.weight_decay);  // Adam: L2 term added to the gradient
    const T decay = o.decoupled ? T(1.0 - o.lr * o.weight_decay) : T(1);  // AdamW: decay the weights
    const T step = T(o.lr / bc1), inv_sqrt_bc2 = T(1.0 / std::sqrt(bc2));
    // A plain function of values and __restrict pointers: as a by-reference lambda GCC reloaded the
    // constants every iteration and left the single-thread (small tensor) instance scalar.
    auto run = [=](int64_t lo, int64_t hi) { adam_range<T>(p, g, mp, vp, b1, b2, eps, l2, decay, step, inv_sqrt_bc2, lo, hi); };
    if (n < 4 * kParallelGrain) {
      run(0, n);
      return;
    }
#pragma omp parallel
    {
      const int nt = omp_get_num_threads(), t = omp_get_thread_num();
      const int64_t chunk = (n + nt - 1) / nt;
      run(std::min<int64_t>(n, t * chunk), std::min<int64_t>(n, (t + 1) * chunk));
    }
  });
}

}  // namespace nl
