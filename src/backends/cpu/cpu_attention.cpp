// Fused row kernels of scaled dot-product attention (Vaswani et al. 2017, Eq. 1) on the CPU: masking,
// softmax and counter-based dropout in one pass per row (forward), and the softmax/dropout backward
// from the saved weights P with the dropout mask regenerated (docs/attention.md). OpenMP over rows;
// all checks run first.
#include "backends/cpu/avx512_intrinsics.h"  // first: GCC 12's intrinsics warnings (the bfloat16 rounding)

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/bf16_simd.h"
#include "backends/cpu/counter_rng.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/threads.h"
#include "backends/cpu/vec_math.h"
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
void check_opts(const Desc& scores, const AttentionKernelOpts& o, const char* kernel) {
  if (o.batch < 0 || o.heads < 0 || o.tq < 0 || o.tk < 0 || !(o.dropout >= 0.0 && o.dropout < 1.0))
    throw std::invalid_argument(std::string(kernel) + ": bad options (batch " + std::to_string(o.batch) + ", heads " +
                                std::to_string(o.heads) + ", tq " + std::to_string(o.tq) + ", tk " +
                                std::to_string(o.tk) + ", dropout " + std::to_string(o.dropout) +
                                "); sizes must be >= 0 and dropout in [0, 1)");
  check_operand(scores, "scores", scores.dtype, o.batch * o.heads * o.tq * o.tk, kernel);
}

// What every row needs: its query index, padding row, mask row, last visible key (causal) and the
// dropout counter of its first element.
template <typename T>
struct RowCtx {
  const T* pad;   // [tk] or nullptr
  const T* am;    // [tk] or nullptr
  int64_t jmax;   // keys j < jmax may be visible
  uint64_t ctr;   // dropout counter of element (r, 0)
};
template <typename T>
RowCtx<T> row_ctx(int64_t r, const T* kpm, const T* am, const AttentionKernelOpts& o) {
  const int64_t i = r % o.tq, b = r / (o.tq * o.heads);
  int64_t jmax = o.tk;
  if (o.causal) jmax = std::max<int64_t>(0, std::min<int64_t>(o.tk, i + (o.tk - o.tq) + 1));
  return {kpm ? kpm + b * o.tk : nullptr, am ? am + i * o.tk : nullptr, jmax, o.offset + (uint64_t)(r * o.tk)};
}
// Dropout multiplier of element j: `kept` (1 / (1 - p)) when T(uniform01) > T(p), tested on integers
// (cpu::KeepTest), else 0; 1 without dropout.
// m: the counter's product (cpu::counter_word_at), which the row's loop advances by cpu::kCounterMul.
template <typename T>
T keep_scale(uint64_t m, bool drop, uint64_t key, uint64_t thr, T kept) {
  if (!drop) return T(1);
  return cpu::counter_word_at(key, m) >= thr ? kept : T(0);
}

// One row of the forward: p = softmax(scale * s + mask) over the visible keys (0 for blocked ones), and
// d = p * dropout multiplier when d is given. Pad / Am say which masks exist, so every loop is free of
// conditional loads and vectorises (omp simd); a blocked key gets -inf / 0 by selection. p may alias s.
// TK > 0: the row's length is TK and every key is within reach (no causal limit), known at compile time,
// so the loops have no remainder code (the cls step's [65536 x 32] call: 0.66 -> 0.58 ms, Zen 4); the
// same operations in the same order as TK = 0 (run-time length), hence the same bits.
template <typename T, bool Pad, bool Am, int TK>
void softmax_row(const RowCtx<T>& c, const T* s, T* p, T* __restrict d, int64_t tk_any, T scale,
                 const AttentionKernelOpts& o, const cpu::KeepTest& kt, T inv_keep) {
  // kt's fields as locals for the omp simd loop (read through the reference, GCC gathered them per lane)
  const bool drop = o.dropout > 0;
  const uint64_t key = kt.key, thr = kt.threshold;
  const T kept = kt.kept_scale(inv_keep);
  const T ninf = -std::numeric_limits<T>::infinity();
  const T* __restrict pad = c.pad;
  const T* __restrict am = c.am;
  const int64_t tk = TK > 0 ? TK : tk_any, jmax = TK > 0 ? TK : c.jmax;
  T m = ninf;
#pragma omp simd reduction(max : m)
  for (int64_t j = 0; j < jmax; ++j) {
    T l = scale * s[j];
    bool b = false;
    if constexpr (Am) l += am[j], b = am[j] == ninf;
    if constexpr (Pad) b = b | (pad[j] != T(0));
    m = std::max(m, b ? ninf : l);
  }
  // p = exp(x - m) first (when p aliases s, s[j] is read before p[j] is written), then summed in T's
  // lanes in an order independent of the row's address (cpu::lane_sum)
#pragma omp simd
  for (int64_t j = 0; j < jmax; ++j) {
    T l = scale * s[j];
    bool b = false;
    if constexpr (Am) l += am[j], b = am[j] == ninf;
    if constexpr (Pad) b = b | (pad[j] != T(0));
    const T e = cpu::vexp(T(l - m));
    p[j] = b ? T(0) : e;
  }
  const T sum = cpu::lane_sum_of<T>(jmax, p);
  for (int64_t j = jmax; j < tk; ++j) p[j] = T(0);  // past the causal limit
  const T inv = sum > 0 ? T(1) / sum : T(0);  // every key blocked: zero weights
#pragma omp simd
  for (int64_t j = 0; j < tk; ++j) p[j] *= inv;
  if (d) {
    uint64_t mc = c.ctr * cpu::kCounterMul;
#pragma omp simd linear(mc : cpu::kCounterMul)
    for (int64_t j = 0; j < tk; ++j) {
      d[j] = p[j] * keep_scale(mc, drop, key, thr, kept);
      mc += cpu::kCounterMul;
    }
  }
}
// One row of the backward: ds = scale * p * (dP - Σ p dP) with dP = g * keep, and the dropped weights
// d = p * keep when dropout is on (d unused without). ds may alias g. TK as softmax_row (the backward has
// no causal limit: every key of the row, so TK = tk).
template <typename T, int TK>
void softmax_backward_row(const RowCtx<T>& c, const T* p, const T* g, T* ds, T* d, int64_t tk_any, T scale,
                          const AttentionKernelOpts& o, const cpu::KeepTest& kt, T inv_keep) {
  const int64_t tk = TK > 0 ? TK : tk_any;
  // pass 1 stores dP in ds (g[j] read before ds[j] is written); sum_j P_j dP_j in T's lanes, in an
  // order independent of the row's address (cpu::lane_sum)
  if (o.dropout > 0) {
    const uint64_t key = kt.key, thr = kt.threshold;  // locals for the omp simd loop (no gathers)
    const T kept = kt.kept_scale(inv_keep);
    uint64_t mc = c.ctr * cpu::kCounterMul;
#pragma omp simd linear(mc : cpu::kCounterMul)
    for (int64_t j = 0; j < tk; ++j) {
      const T keep = keep_scale(mc, true, key, thr, kept);
      d[j] = p[j] * keep;
      ds[j] = g[j] * keep;
      mc += cpu::kCounterMul;
    }
  } else {
#pragma omp simd
    for (int64_t j = 0; j < tk; ++j) ds[j] = g[j];
  }
  const T dd = cpu::lane_dot<T>(tk, p, ds);
#pragma omp simd
  for (int64_t j = 0; j < tk; ++j) ds[j] = scale * p[j] * (ds[j] - dd);
}

// softmax_row with the masks that exist (kp, ap: the kernel's padding and mask tensors, or null).
template <typename T, int TK>
void softmax_row_masks(const T* kp, const T* ap, const RowCtx<T>& c, const T* s, T* p, T* d, int64_t tk, T scale,
                       const AttentionKernelOpts& o, const cpu::KeepTest& kt, T inv_keep) {
  if (kp && ap)
    softmax_row<T, true, true, TK>(c, s, p, d, tk, scale, o, kt, inv_keep);
  else if (kp)
    softmax_row<T, true, false, TK>(c, s, p, d, tk, scale, o, kt, inv_keep);
  else if (ap)
    softmax_row<T, false, true, TK>(c, s, p, d, tk, scale, o, kt, inv_keep);
  else
    softmax_row<T, false, false, TK>(c, s, p, d, tk, scale, o, kt, inv_keep);
}

// The kernels' `dropped`: null (not wanted), in the scores' dtype (the dropped weights, wanted with dropout),
// or bfloat16 beside float32 scores (the products' operand, always written; FusedKernels::attention_softmax).
// Checks it and returns whether it is the bfloat16 operand.
bool check_dropped(const Desc& dropped, const Desc& scores, const AttentionKernelOpts& o, const char* kernel) {
  const int64_t n = o.batch * o.heads * o.tq * o.tk;
  if (dropped.data && dropped.dtype == DType::BFloat16) {
    if (scores.dtype != DType::Float32)
      throw std::invalid_argument(std::string(kernel) + ": a bfloat16 `dropped` needs float32 scores, got " +
                                  dtype_name(scores.dtype));
    check_operand(dropped, "dropped", DType::BFloat16, n, kernel);
    return true;
  }
  if (o.dropout > 0) check_operand(dropped, "dropped", scores.dtype, n, kernel);
  return false;
}

// Row r of a bfloat16 `dropped`: the row's float32 values (in L1) rounded once to nearest even.
template <typename T>
void round_operand_row(const T* row, const Desc& dropped, int64_t r, int64_t tk) {
  if constexpr (std::is_same_v<T, float>) cpu::round_row_bf16(row, static_cast<uint16_t*>(dropped.data) + r * tk, tk);
}
}  // namespace

void CpuBackend::attention_softmax(const Desc& probs, const Desc& dropped, const Desc& scores, const Desc& key_padding,
                                   const Desc& attn_mask, const AttentionKernelOpts& o) {
  prof::Scope prof_scope(prof::Cat::Loss);
  const char* kernel = "attention_softmax";
  check_opts(scores, o, kernel);
  check_operand(probs, "probs", scores.dtype, scores.numel(), kernel);
  const bool op16 = check_dropped(dropped, scores, o, kernel);
  if (key_padding.data) check_operand(key_padding, "key_padding", scores.dtype, o.batch * o.tk, kernel);
  if (attn_mask.data) check_operand(attn_mask, "attn_mask", scores.dtype, o.tq * o.tk, kernel);
  const int64_t R = o.batch * o.heads * o.tq, tk = o.tk;
  dispatch_floating(scores.dtype, kernel, [&](auto tag) {
    using T = decltype(tag);
    const T *sp = static_cast<const T*>(scores.data), *kp = static_cast<const T*>(key_padding.data),
            *ap = static_cast<const T*>(attn_mask.data);
    T *pp = static_cast<T*>(probs.data), *dp = static_cast<T*>(dropped.data);
    const T scale = T(o.scale), inv_keep = T(1.0 / (1.0 - o.dropout));
    const cpu::KeepTest kt = cpu::KeepTest::make<T>(o.seed, o.dropout);
    const bool row32 = tk == 32 && !o.causal;  // the Transformer's usual head rows: a fixed length
#pragma omp parallel if (R * tk >= kParallelGrain)
    {
      // A bfloat16 operand: each row's dropped weights in float32 here (or P itself without dropout), then
      // rounded while in L1; no float32 copy in memory and no cast pass over it. Against the float32
      // weights and their cast, per [128 x 4 x 32 x 32] call with dropout 0.1 (Intel EMR, one core, three
      // runs): forward 1.23-1.50 -> 1.19-1.47 ms, backward 0.71-0.83 -> 0.58-0.70 ms; without dropout the
      // forward is 1-3% slower (the cast of P read it hot from L2), the backward 13% faster.
      std::vector<T> row(op16 ? (size_t)tk : 0);
#pragma omp for schedule(static)
      for (int64_t r = 0; r < R; ++r) {
        const RowCtx<T> c = row_ctx(r, kp, ap, o);
        const T* s = sp + r * tk;
        T* p = pp + r * tk;
        T* d = o.dropout > 0 ? (op16 ? row.data() : dp + r * tk) : nullptr;
        if (row32)
          softmax_row_masks<T, 32>(kp, ap, c, s, p, d, tk, scale, o, kt, inv_keep);
        else
          softmax_row_masks<T, 0>(kp, ap, c, s, p, d, tk, scale, o, kt, inv_keep);
        if (op16) round_operand_row(d ? d : p, dropped, r, tk);  // without dropout the operand is P
      }
    }
  });
}

void CpuBackend::attention_softmax_backward(const Desc& gscores, const Desc& dropped, const Desc& gprobs,
                                            const Desc& probs, const AttentionKernelOpts& o) {
  prof::Scope prof_scope(prof::Cat::Loss);
  const char* kernel = "attention_softmax_backward";
  check_opts(probs, o, kernel);
  check_operand(gscores, "gscores", probs.dtype, probs.numel(), kernel);
  check_operand(gprobs, "gprobs", probs.dtype, probs.numel(), kernel);
  const bool op16 = check_dropped(dropped, probs, o, kernel);
  const int64_t R = o.batch * o.heads * o.tq, tk = o.tk;
  dispatch_floating(probs.dtype, kernel, [&](auto tag) {
    using T = decltype(tag);
    const T *pp = static_cast<const T*>(probs.data), *gp = static_cast<const T*>(gprobs.data);
    T *gs = static_cast<T*>(gscores.data), *dp = static_cast<T*>(dropped.data);
    const T scale = T(o.scale), inv_keep = T(1.0 / (1.0 - o.dropout));
    const cpu::KeepTest kt = cpu::KeepTest::make<T>(o.seed, o.dropout);
#pragma omp parallel if (R * tk >= kParallelGrain)
    {
      std::vector<T> row(op16 ? (size_t)tk : 0);  // a bfloat16 operand's row in float32, as in the forward
#pragma omp for schedule(static)
      for (int64_t r = 0; r < R; ++r) {
        const RowCtx<T> c = row_ctx<T>(r, nullptr, nullptr, o);
        T* d = o.dropout > 0 ? (op16 ? row.data() : dp + r * tk) : nullptr;
        if (tk == 32)
          softmax_backward_row<T, 32>(c, pp + r * tk, gp + r * tk, gs + r * tk, d, tk, scale, o, kt, inv_keep);
        else
          softmax_backward_row<T, 0>(c, pp + r * tk, gp + r * tk, gs + r * tk, d, tk, scale, o, kt, inv_keep);
        if (op16) round_operand_row(d ? d : pp + r * tk, dropped, r, tk);  // without dropout the operand is P
      }
    }
  });
}

}  // namespace nl
