// Fused LayerNorm-family kernel (Xu et al. 2019): forward y = (x - mu) / D over the last dim, and the
// closed-form backward of appendix B. With g = dL/dy, d = x - mu, S = sum_i g_i d_i, n_v = H (biased)
// or H - 1 (unbiased), s' = dD/dvar * 2 (D for eps inside the sqrt, sqrt(var) for eps added to std):
//   dL/dx_j = (g_j - [grad through mean] * mean(g)) / D - [grad through std] * d_j * S / (n_v * s' * D^2)
// which is W1 g (LayerNorm-simple), W2 g (detach-mean), W3 g (detach-variance) or g / D (DetachNorm).
// With the affine of Eq. 1 fused in (y = w ⊙ n + b), the formula runs on g = w ⊙ dL/dy, and the
// parameter gradients dw = Σ_rows dL/dy ⊙ n, db = Σ_rows dL/dy are summed in the same pass.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/flag_dispatch.h"
#include "backends/profiler.h"
#include "backends/cpu/row_chunks.h"
#include "backends/cpu/threads.h"
#include "backends/cpu/vec_math.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace nl {

namespace {
// Σ ((x - m) - lo)² of one row in cpu::lane_sum's 16 lanes, order and bits (each lane adds d·d as one fused
// multiply-add, as GCC contracts the generic loop); with AVX-512 on a register, the tail by a masked load; with
// AVX2 on two registers, the tail by vmaskmovps into the first lanes only.
template <typename T>
T squared_deviations(int64_t H, const T* xr, T m, T lo) {
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>) {
    const __m512 vm = _mm512_set1_ps(m), vl = _mm512_set1_ps(lo);
    __m512 acc = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= H; i += 16) {
      const __m512 d = _mm512_sub_ps(_mm512_sub_ps(_mm512_loadu_ps(xr + i), vm), vl);
      acc = _mm512_fmadd_ps(d, d, acc);
    }
    if (i < H) {
      const __mmask16 k = (__mmask16)((1u << (H - i)) - 1);
      const __m512 d = _mm512_sub_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, xr + i), vm), vl);
      acc = _mm512_mask3_fmadd_ps(d, d, acc, k);
    }
    return cpu::lane_tree(acc);
  }
#elif defined(NL_LANES_AVX2)
  if constexpr (std::is_same_v<T, float>) {
    const __m256 vm = _mm256_set1_ps(m), vl = _mm256_set1_ps(lo);
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();  // lanes 0-7 and 8-15
    auto dev = [&](__m256 x) { return _mm256_sub_ps(_mm256_sub_ps(x, vm), vl); };
    int64_t i = 0;
    for (; i + 16 <= H; i += 16) {
      const __m256 d0 = dev(_mm256_loadu_ps(xr + i)), d1 = dev(_mm256_loadu_ps(xr + i + 8));
      a0 = _mm256_fmadd_ps(d0, d0, a0);
      a1 = _mm256_fmadd_ps(d1, d1, a1);
    }
    if (i < H) {
      const __m256i k0 = cpu::lanes8(H - i), k1 = cpu::lanes8(H - i - 8);
      const __m256 d0 = dev(_mm256_maskload_ps(xr + i, k0)), d1 = dev(_mm256_maskload_ps(xr + i + 8, k1));
      a0 = cpu::in_lanes(a0, _mm256_fmadd_ps(d0, d0, a0), k0);
      a1 = cpu::in_lanes(a1, _mm256_fmadd_ps(d1, d1, a1), k1);
    }
    return cpu::lane_tree(a0, a1);
  }
#endif
  return cpu::lane_sum<T>(H, [&](int64_t i) {
    const T d = (xr[i] - m) - lo;
    return d * d;
  });
}

// The row mean split as m + lo (m = mu rounded to T, lo = mu - m), mu summed in double (cpu::lane_sum_double:
// the same bits at any address, in the forward and the backward alike).
template <typename T>
void row_mean(int64_t H, const T* xr, bool center, T& m, T& lo) {
  const double mu = center ? cpu::lane_sum_double(H, xr) / (double)H : 0.0;
  m = T(mu), lo = T(mu - (double)m);
}

constexpr int64_t kNormRows = 8;  // rows whose reductions run side by side (independent chains)
}  // namespace

void CpuBackend::layer_norm(const Desc& y, const Desc& mean, const Desc& rstd, const Desc& x, const Desc& weight,
                            const Desc& bias, const NormKernelOpts& o) {
  prof::Scope prof_scope(prof::Cat::Norm);
  const int64_t H = x.shape[x.ndim - 1], R = H ? x.numel() / H : 0;  // H = 0: nothing to normalise
  const double nv = o.unbiased ? (double)(H - 1) : (double)H;
  dispatch_floating(x.dtype, "layer_norm", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = static_cast<const T*>(x.data);
    T* yp = static_cast<T*>(y.data);
    T* mp = static_cast<T*>(mean.data);
    T* rp = static_cast<T*>(rstd.data);
    const T* wp = static_cast<const T*>(weight.data);
    const T* bp = static_cast<const T*>(bias.data);
    // Blocks of kNormRows rows, each reduction done for every row of the block before the next: a row's
    // sums are chains of dependent adds ending in a tree, a square root and a division, which one row at a
    // time left the core waiting; side by side the rows' chains overlap. With the mean's lanes kept in
    // registers (lane_sum_double): median 0.29-0.37 -> 0.25-0.28 ms per [4096 x 128] call, the backward
    // 0.37-0.47 -> 0.32 (Intel Xeon EMR, one core, 1,000 calls, /work/scratch-style loop of fwd + bwd).
    // Each row's arithmetic and order are those of a row alone.
    const int64_t blocks = (R + kNormRows - 1) / kNormRows;
#pragma omp parallel for schedule(static) if (R * H >= kParallelGrain)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t r0 = b * kNormRows, nr = std::min(kNormRows, R - r0);
      T m[kNormRows], lo[kNormRows], inv[kNormRows];
      for (int64_t k = 0; k < nr; ++k) row_mean(H, xp + (r0 + k) * H, o.center, m[k], lo[k]);
      // x - mu as (x - m) - lo: x - m is exact for x near m (Sterbenz), so a near-constant float32 row
      // (|mu| >> std) keeps the digits of the double mean that m alone would lose (issue 28; without lo,
      // 1000 + noise of 1e-2 shifted y by ~3e-3). The squares are summed in T's lanes (float32: 16 a
      // vector, twice double's; cpu::lane_sum, an order independent of the row's address).
      for (int64_t k = 0; k < nr; ++k) {
        const double var = (double)squared_deviations(H, xp + (r0 + k) * H, m[k], lo[k]) / nv;
        const double D = o.eps_inside ? std::sqrt(var + o.eps) : std::sqrt(var) + o.eps;
        inv[k] = T(1.0 / D);
      }
      for (int64_t k = 0; k < nr; ++k) {
        const T *xr = xp + (r0 + k) * H, mk = m[k], lk = lo[k], ik = inv[k];
        T* yr = yp + (r0 + k) * H;
        if (wp && bp)
#pragma omp simd
          for (int64_t i = 0; i < H; ++i) yr[i] = ((xr[i] - mk) - lk) * ik * wp[i] + bp[i];
        else if (wp)
#pragma omp simd
          for (int64_t i = 0; i < H; ++i) yr[i] = ((xr[i] - mk) - lk) * ik * wp[i];
        else
#pragma omp simd
          for (int64_t i = 0; i < H; ++i) yr[i] = ((xr[i] - mk) - lk) * ik + (bp ? bp[i] : T(0));
        mp[r0 + k] = mk;
        rp[r0 + k] = ik;
      }
    }
  });
}

namespace {
// The middle pass of one row of the LayerNorm backward: d = (x - m) - lo, with Cols the parameter-gradient
// row (aw[i] += dL/dy ⊙ d / D, aw[H + i] += dL/dy), with W g = w ⊙ dL/dy into gw; and the sums Σ g and
// Σ g·d in cpu::lane_sum's 16 lanes and order, so the same bits as those passes apart (one pass instead of
// five: 0.36 -> 0.30 ms per [4096 x 128] call, 0.65 -> 0.57 for H = 256; Zen 4, one core). The branches are
// template arguments so that the 16-lane body vectorises.
template <typename T, bool Cols, bool W>
void row_pass(int64_t H, const T* __restrict xr, const T* __restrict gr, const T* __restrict wp, T m, T lo, T inv_t,
              T* __restrict d, T* __restrict aw, T* __restrict gw, T& gsum, T& S) {
  constexpr int L = 16;
  T acc_g[L] = {}, acc_s[L] = {};
  auto step = [&](int64_t i, int l) {  // element i into lane l
    const T di = (xr[i] - m) - lo;
    d[i] = di;
    if constexpr (Cols) {
      aw[i] += gr[i] * (di * inv_t);
      aw[H + i] += gr[i];
    }
    T gi = gr[i];
    if constexpr (W) {
      gi = gr[i] * wp[i];
      gw[i] = gi;
    }
    acc_g[l] += gi;
    acc_s[l] += gi * di;
  };
  int64_t i0 = 0;
  for (; i0 + L <= H; i0 += L) {
#pragma omp simd
    for (int l = 0; l < L; ++l) step(i0 + l, l);
  }
  for (int l = 0; i0 + l < H; ++l) step(i0 + l, l);  // the tail into the first lanes, as cpu::lane_sum
  gsum = cpu::lane_tree(acc_g), S = cpu::lane_tree(acc_s);  // lane_sum's tree (on registers for float32)
}
}  // namespace

void CpuBackend::layer_norm_backward(const Desc& gx, const Desc& gweight, const Desc& gbias, const Desc& gy,
                                     const Desc& x, const Desc& mean, const Desc& rstd, const Desc& weight,
                                     const NormKernelOpts& o, bool accumulate) {
  prof::Scope prof_scope(prof::Cat::Norm);
  const int64_t H = x.shape[x.ndim - 1], R = H ? x.numel() / H : 0;  // H = 0: nothing to normalise
  const double nv = o.unbiased ? (double)(H - 1) : (double)H;
  const bool through_mean = o.center && !o.detach_mean;
  (void)mean;  // recomputed in double per row (below); the saved mean is the forward's output for callers
  const bool want_w = gweight.data != nullptr, want_b = gbias.data != nullptr;
  cpu::RowChunks chunks(R, H, (want_w || want_b) ? 2 * H : 0);  // per chunk: dw [H], db [H]
  dispatch_floating(x.dtype, "layer_norm backward", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = static_cast<const T*>(x.data);
    const T* gp = static_cast<const T*>(gy.data);
    const T* rp = static_cast<const T*>(rstd.data);
    const T* wp = static_cast<const T*>(weight.data);
    T* op = static_cast<T*>(gx.data);
    chunks.run([&](int64_t r0, int64_t r1, double* partials) {
      cpu::ColumnSums<T> cols(partials, 2 * H);  // dw [H], db [H]
      std::vector<T> gw(wp ? (size_t)H : 0), dv((size_t)H);  // w ⊙ dL/dy, and x - mu, of one row
      for (int64_t r = r0; r < r1; ++r) {
        const T *xr = xp + r * H, *gr = gp + r * H;
        T* out = op + r * H;
        // The mean again in double from the row (in cache): the saved one is rounded to T, which for a
        // near-constant float32 row is off by up to half an ulp of |mu|, a large part of the deviations.
        // d = x - mu as in the forward ((x - m) - lo, exact near m); the rest in T's lanes (float32: 16
        // a vector), the per-row scalars in double.
        T m, lo;
        row_mean(H, xr, o.center, m, lo);
        const double inv = rp[r], D = 1.0 / inv;
        const T inv_t = T(inv);
        T* d = dv.data();
        T* gwr = wp ? gw.data() : nullptr;
        T* aw = cols.row();
        // One pass for d, the parameter-gradient rows, g = w ⊙ dL/dy and the sums Σ g and Σ g·d (row_pass).
        T gsum, S;
        cpu::with_flags(aw != nullptr, gwr != nullptr, [&](auto cols_flag, auto w_flag) {
          row_pass<T, decltype(cols_flag)::value, decltype(w_flag)::value>(H, xr, gr, wp, m, lo, inv_t, d, aw, gwr,
                                                                           gsum, S);
        });
        if (aw) cols.next();
        if (gwr) gr = gwr;
        const T gbar = through_mean ? T((double)gsum / (double)H) : T(0);
        double coef = 0;  // multiplies d_j in the std term
        if (!o.detach_std) {
          const double sprime = o.eps_inside ? D : D - o.eps;
          coef = sprime > 0 ? (double)S / (nv * sprime * D * D) : 0.0;
        }
        const T coef_t = T(coef);
        if (accumulate) {  // out holds the gradient summed so far: one add, as a separate pass would make
#pragma omp simd
          for (int64_t j = 0; j < H; ++j) {
            const T v = (gr[j] - gbar) * inv_t - coef_t * d[j];
            out[j] = out[j] + v;
          }
        } else {
#pragma omp simd
          for (int64_t j = 0; j < H; ++j) out[j] = (gr[j] - gbar) * inv_t - coef_t * d[j];
        }
      }
      cols.finish();
    });
    const double* acc = chunks.total();
    if (want_w)
      for (int64_t i = 0; i < H; ++i) static_cast<T*>(gweight.data)[i] = T(acc[(size_t)i]);
    if (want_b)
      for (int64_t i = 0; i < H; ++i) static_cast<T*>(gbias.data)[i] = T(acc[(size_t)(H + i)]);
  });
}

}  // namespace nl
