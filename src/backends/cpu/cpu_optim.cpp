// Fused Adam / AdamW update (Kingma & Ba 2015, Algorithm 1; Loshchilov & Hutter 2019, Algorithm 2),
// matching torch.optim.Adam/AdamW: p -= lr * m_hat / (sqrt(v_hat) + eps).
#include <cmath>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/threads.h"

namespace nl {

void CpuBackend::adam_step(const Desc& param, const Desc& grad, const Desc& m, const Desc& v,
                           const AdamKernelOpts& o) {
  const int64_t n = param.numel();
  const double bc1 = 1.0 - std::pow(o.beta1, (double)o.step), bc2 = 1.0 - std::pow(o.beta2, (double)o.step);
  dispatch_floating(param.dtype, "adam", [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(param.data);
    const T* g = static_cast<const T*>(grad.data);
    T* mp = static_cast<T*>(m.data);
    T* vp = static_cast<T*>(v.data);
    const T b1 = T(o.beta1), b2 = T(o.beta2), lr = T(o.lr), wd = T(o.weight_decay), eps = T(o.eps);
    const T step = T(o.lr / bc1), inv_sqrt_bc2 = T(1.0 / std::sqrt(bc2));
    const T decay = o.decoupled ? T(1.0 - o.lr * o.weight_decay) : T(1);
#pragma omp parallel for simd schedule(static) if (n >= kParallelGrain)
    for (int64_t i = 0; i < n; ++i) {
      T gi = o.decoupled ? g[i] : g[i] + wd * p[i];
      mp[i] = b1 * mp[i] + (T(1) - b1) * gi;
      vp[i] = b2 * vp[i] + (T(1) - b2) * gi * gi;
      p[i] = p[i] * decay - step * mp[i] / (std::sqrt(vp[i]) * inv_sqrt_bc2 + eps);
    }
    (void)lr;
  });
}

}  // namespace nl
