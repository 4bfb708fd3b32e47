// Fused row kernels of scaled dot-product attention (Vaswani et al. 2017, Eq. 1) on the CPU: masking,
// softmax, log-sum-exp and counter-based dropout in one pass per row (forward), and the softmax/dropout
// backward that rebuilds P from the raw scores and the saved log-sum-exp (Dao et al. 2022, FlashAttention,
// Alg. 4, without the tiling: the rows here are short). OpenMP over rows; all checks run first.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "backends/cpu/counter_rng.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/threads.h"
#include "backends/profiler.h"

namespace nl {

namespace {
std::string dims_str(const Desc& d) {
  std::string s = "[";
  for (int i = 0; i < d.ndim; ++i) s += (i ? ", " : "") + std::to_string(d.shape[i]);
  return s + "]";
}
// Throws std::invalid_argument unless `d` is contiguous, of dtype `t` and has `n` elements.
void check_operand(const Desc& d, const char* name, DType t, int64_t n, const char* kernel) {
  if (d.dtype != t || !d.contiguous() || d.numel() != n)
    throw std::invalid_argument(std::string(kernel) + ": " + name + " " + dims_str(d) + " (" + dtype_name(d.dtype) +
                                ") must be contiguous " + dtype_name(t) + " with " + std::to_string(n) +
                                " elements; pass contiguous tensors of the scores' dtype");
}
void check_masks(const Desc& scores, const Desc& kpm, const Desc& am, const AttentionKernelOpts& o,
                 const char* kernel) {
  if (o.batch < 0 || o.heads < 0 || o.tq < 0 || o.tk < 0 || !(o.dropout >= 0.0 && o.dropout < 1.0))
    throw std::invalid_argument(std::string(kernel) + ": bad options (batch " + std::to_string(o.batch) + ", heads " +
                                std::to_string(o.heads) + ", tq " + std::to_string(o.tq) + ", tk " +
                                std::to_string(o.tk) + ", dropout " + std::to_string(o.dropout) +
                                "); sizes must be >= 0 and dropout in [0, 1)");
  check_operand(scores, "scores", scores.dtype, o.batch * o.heads * o.tq * o.tk, kernel);
  if (kpm.data) check_operand(kpm, "key_padding", scores.dtype, o.batch * o.tk, kernel);
  if (am.data) check_operand(am, "attn_mask", scores.dtype, o.tq * o.tk, kernel);
}

// What every row needs: its query index, padding row, mask row, last visible key (causal) and the
// dropout counter of its first element.
template <typename T>
struct RowCtx {
  const T* pad;   // [tk] or nullptr
  const T* am;    // [tk] or nullptr
  int64_t jmax;   // keys j < jmax may be visible
  uint64_t ctr;   // dropout counter of element (r, 0)
  bool blocked(int64_t j) const {
    return (pad && pad[j] != T(0)) || (am && am[j] == -std::numeric_limits<T>::infinity());
  }
  T logit(const T* s, int64_t j, T scale) const { return scale * s[j] + (am ? am[j] : T(0)); }
};
template <typename T>
RowCtx<T> row_ctx(int64_t r, const T* kpm, const T* am, const AttentionKernelOpts& o) {
  const int64_t i = r % o.tq, b = r / (o.tq * o.heads);
  int64_t jmax = o.tk;
  if (o.causal) jmax = std::max<int64_t>(0, std::min<int64_t>(o.tk, i + (o.tk - o.tq) + 1));
  return {kpm ? kpm + b * o.tk : nullptr, am ? am + i * o.tk : nullptr, jmax, o.offset + (uint64_t)(r * o.tk)};
}
// Dropout multiplier of element j: keep / (1 - p) or 1 without dropout.
template <typename T>
T keep_scale(const RowCtx<T>& c, int64_t j, const AttentionKernelOpts& o, T inv_keep) {
  if (o.dropout == 0.0) return T(1);
  return T(cpu::uniform01(o.seed, c.ctr + (uint64_t)j)) > T(o.dropout) ? inv_keep : T(0);
}
}  // namespace

void CpuBackend::attention_softmax(const Desc& probs, const Desc& lse, const Desc& scores, const Desc& key_padding,
                                   const Desc& attn_mask, const AttentionKernelOpts& o) {
  prof::Scope prof_scope(prof::Cat::Loss);
  const char* kernel = "attention_softmax";
  check_masks(scores, key_padding, attn_mask, o, kernel);
  check_operand(probs, "probs", scores.dtype, scores.numel(), kernel);
  const int64_t R = o.batch * o.heads * o.tq, tk = o.tk;
  check_operand(lse, "lse", scores.dtype, R, kernel);
  dispatch_floating(scores.dtype, kernel, [&](auto tag) {
    using T = decltype(tag);
    const T *sp = static_cast<const T*>(scores.data), *kp = static_cast<const T*>(key_padding.data),
            *ap = static_cast<const T*>(attn_mask.data);
    T *pp = static_cast<T*>(probs.data), *lp = static_cast<T*>(lse.data);
    const T scale = T(o.scale), inv_keep = T(1.0 / (1.0 - o.dropout));
#pragma omp parallel for schedule(static) if (R * tk >= kParallelGrain)
    for (int64_t r = 0; r < R; ++r) {
      const RowCtx<T> c = row_ctx(r, kp, ap, o);
      const T* s = sp + r * tk;
      T* p = pp + r * tk;
      T m = -std::numeric_limits<T>::infinity();
      for (int64_t j = 0; j < c.jmax; ++j)
        if (!c.blocked(j)) m = std::max(m, c.logit(s, j, scale));
      if (m == -std::numeric_limits<T>::infinity()) {  // every key blocked: zero weights
        for (int64_t j = 0; j < tk; ++j) p[j] = T(0);
        lp[r] = m;
        continue;
      }
      double sum = 0;  // p = exp(x - m) first (may overwrite s when aliased: logit(j) is read before)
      for (int64_t j = 0; j < tk; ++j) {
        const T e = j < c.jmax && !c.blocked(j) ? std::exp(c.logit(s, j, scale) - m) : T(0);
        p[j] = e;
        sum += e;
      }
      const T inv = T(1.0 / sum);
      for (int64_t j = 0; j < tk; ++j) p[j] *= inv * keep_scale(c, j, o, inv_keep);
      lp[r] = m + T(std::log(sum));
    }
  });
}

void CpuBackend::attention_softmax_backward(const Desc& gscores, const Desc& probs, const Desc& gprobs,
                                            const Desc& scores, const Desc& lse, const Desc& key_padding,
                                            const Desc& attn_mask, const AttentionKernelOpts& o) {
  prof::Scope prof_scope(prof::Cat::Loss);
  const char* kernel = "attention_softmax_backward";
  check_masks(scores, key_padding, attn_mask, o, kernel);
  for (const auto& [d, name] : {std::pair{&gscores, "gscores"}, {&probs, "probs"}, {&gprobs, "gprobs"}})
    check_operand(*d, name, scores.dtype, scores.numel(), kernel);
  const int64_t R = o.batch * o.heads * o.tq, tk = o.tk;
  check_operand(lse, "lse", scores.dtype, R, kernel);
  dispatch_floating(scores.dtype, kernel, [&](auto tag) {
    using T = decltype(tag);
    const T *sp = static_cast<const T*>(scores.data), *kp = static_cast<const T*>(key_padding.data),
            *ap = static_cast<const T*>(attn_mask.data), *lp = static_cast<const T*>(lse.data),
            *gp = static_cast<const T*>(gprobs.data);
    T *gs = static_cast<T*>(gscores.data), *pp = static_cast<T*>(probs.data);
    const T scale = T(o.scale), inv_keep = T(1.0 / (1.0 - o.dropout));
#pragma omp parallel for schedule(static) if (R * tk >= kParallelGrain)
    for (int64_t r = 0; r < R; ++r) {
      const RowCtx<T> c = row_ctx(r, kp, ap, o);
      const T *s = sp + r * tk, *g = gp + r * tk, l = lp[r];
      T *p = pp + r * tk, *ds = gs + r * tk;
      const bool empty = l == -std::numeric_limits<T>::infinity();
      double dot = 0;  // sum_j P_j dP_j; pass 1 stores P in p and dP in ds (element j read before written)
      for (int64_t j = 0; j < tk; ++j) {
        const T pj = !empty && j < c.jmax && !c.blocked(j) ? std::exp(c.logit(s, j, scale) - l) : T(0);
        const T dpj = g[j] * keep_scale(c, j, o, inv_keep);
        p[j] = pj;
        ds[j] = dpj;
        dot += (double)pj * dpj;
      }
      const T d = T(dot);
      for (int64_t j = 0; j < tk; ++j) {
        ds[j] = scale * p[j] * (ds[j] - d);
        p[j] *= keep_scale(c, j, o, inv_keep);
      }
    }
  });
}

}  // namespace nl
