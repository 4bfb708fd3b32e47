// CPU kernels for softmax, fused cross-entropy (with label smoothing and ignore_index) and
// embedding-style row gathers/scatters. All take contiguous row-major inputs.
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/prefetch.h"
#include "backends/profiler.h"
#include "backends/cpu/threads.h"
#include "backends/cpu/typed_rows.h"
#include "backends/cpu/vec_math.h"

namespace nl {
namespace {
// Product of the leading dims (never divides: the last dim may be 0, e.g. softmax over [B, 0]).
inline int64_t rows_of(const Desc& d) {
  int64_t r = 1;
  for (int i = 0; i + 1 < d.ndim; ++i) r *= d.shape[i];
  return r;
}
inline int64_t cols_of(const Desc& d) { return d.ndim ? d.shape[d.ndim - 1] : 1; }

// One row of C logits x (T, or bfloat16 read widened to float): its max m and s = Σ exp(x - m), each term
// in T by cpu::vexp (vectorised for float), summed in double — for bfloat16 logits in float32's fixed
// lanes (cpu::lane_sum), whose rounding is far below their 8 bits. p (unless null) receives the terms
// exp(x - m) (for bfloat16 logits the sum then runs over them, with the same bits), sum_x (unless null)
// the sum of the logits (label smoothing needs it). An empty row gives m = -inf and s = 0.
template <typename T, typename X>
double row_exp_sum(const X* x, T* p, int64_t C, T& m, double* sum_x = nullptr) {
  using cpu::load;
  double s = 0, sx = 0;
  if (C == 0) {
    m = -INFINITY;
    if (sum_x) *sum_x = 0;
    return 0;
  }
  T mx = load(x, 0);
#pragma omp simd reduction(max : mx)
  for (int64_t c = 1; c < C; ++c) mx = load(x, c) > mx ? load(x, c) : mx;
  m = mx;
  if constexpr (!std::is_same_v<X, T>) {  // bfloat16 logits (8 significant bits): float32 lanes
    if (p) {
#pragma omp simd
      for (int64_t c = 0; c < C; ++c) p[c] = cpu::vexp(T(load(x, c) - mx));
      s = (double)cpu::lane_sum_of<T>(C, p);
    } else {
      s = (double)cpu::lane_sum<T>(C, [&](int64_t c) { return cpu::vexp(T(load(x, c) - mx)); });
    }
    sx = (double)cpu::lane_sum<T>(C, [&](int64_t c) { return load(x, c); });
  } else if (p) {
#pragma omp simd reduction(+ : s, sx)
    for (int64_t c = 0; c < C; ++c) {
      const T e = cpu::vexp(T(load(x, c) - mx));
      p[c] = e;
      s += (double)e;
      sx += (double)load(x, c);
    }
  } else {
#pragma omp simd reduction(+ : s, sx)
    for (int64_t c = 0; c < C; ++c) {
      s += (double)cpu::vexp(T(load(x, c) - mx));
      sx += (double)load(x, c);
    }
  }
  if (sum_x) *sum_x = sx;
  return s;
}

// One row of C logits: writes softmax probabilities to p (unless null) and returns log-sum-exp, shifting
// by the row max for stability. Softmax and log_softmax.
template <typename T>
double softmax_row(const T* x, T* p, int64_t C) {
  T m;
  const double s = row_exp_sum<T>(x, p, C, m);
  if (C == 0) return -INFINITY;  // log of an empty sum; nothing to write
  if (p) {
    const T inv = T(1.0 / s);
#pragma omp simd
    for (int64_t c = 0; c < C; ++c) p[c] *= inv;
  }
  return (double)m + std::log(s);
}
}  // namespace

void CpuBackend::softmax(const Desc& out, const Desc& in, bool log) {
  prof::Scope prof_scope(prof::Cat::Loss);
  const int64_t R = rows_of(in), C = cols_of(in);
  dispatch_floating(in.dtype, "softmax", [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(in.data);
    T* y = static_cast<T*>(out.data);
#pragma omp parallel for schedule(static) if (R * C >= kParallelGrain)
    for (int64_t r = 0; r < R; ++r) {
      const T* xr = x + r * C;
      T* yr = y + r * C;
      const double lse = softmax_row<T>(xr, log ? nullptr : yr, C);
      if (log)
        for (int64_t c = 0; c < C; ++c) yr[c] = T((double)xr[c] - lse);
    }
  });
}

void CpuBackend::softmax_backward(const Desc& gin, const Desc& gout, const Desc& yd, bool log) {
  prof::Scope prof_scope(prof::Cat::Loss);
  const int64_t R = rows_of(yd), C = cols_of(yd);
  dispatch_floating(yd.dtype, "softmax backward", [&](auto tag) {
    using T = decltype(tag);
    const T* y = static_cast<const T*>(yd.data);
    const T* gy = static_cast<const T*>(gout.data);
    T* gx = static_cast<T*>(gin.data);
#pragma omp parallel for schedule(static) if (R * C >= kParallelGrain)
    for (int64_t r = 0; r < R; ++r) {
      const T *yr = y + r * C, *gr = gy + r * C;
      T* o = gx + r * C;
      double s = 0;
      if (log) {  // dx = g - softmax * sum(g)
        for (int64_t c = 0; c < C; ++c) s += gr[c];
        for (int64_t c = 0; c < C; ++c) o[c] = gr[c] - cpu::vexp(yr[c]) * T(s);
      } else {  // dx = y * (g - sum(g*y))
        for (int64_t c = 0; c < C; ++c) s += (double)gr[c] * yr[c];
        for (int64_t c = 0; c < C; ++c) o[c] = yr[c] * (gr[c] - T(s));
      }
    }
  });
}

namespace {
// Rows of a table gathered in a data-dependent order miss the caches (the hardware prefetchers cannot
// guess the next one): the row kGatherAhead entries on is asked for while this one moves.
constexpr int64_t kGatherAhead = 8;
}  // namespace

void CpuBackend::index_select_rows(const Desc& out, const Desc& table, const Desc& idx) {
  prof::Scope prof_scope(prof::Cat::Index);
  const int64_t V = table.shape[0], D = table.numel() / std::max<int64_t>(V, 1), n = idx.numel();
  const int64_t* ix = static_cast<const int64_t*>(idx.data);
  for (int64_t i = 0; i < n; ++i)
    if (ix[i] < 0 || ix[i] >= V)
      throw std::out_of_range("index " + std::to_string(ix[i]) + " out of range for a table of " +
                              std::to_string(V) + " rows");
  // Rows are moved as bytes, so every dtype is taken (bfloat16 too: a beam's cached keys and values
  // under autocast are reordered with it).
  const size_t row = (size_t)D * dtype_size(table.dtype);
  const char* t = static_cast<const char*>(table.data);
  char* o = static_cast<char*>(out.data);
#pragma omp parallel for schedule(static) if (n * D >= kParallelGrain)
  for (int64_t i = 0; i < n; ++i) {
    if (i + kGatherAhead < n) cpu::prefetch_block(t + (size_t)ix[i + kGatherAhead] * row, 1, (int64_t)row, 0, false);
    std::memcpy(o + (size_t)i * row, t + (size_t)ix[i] * row, row);
  }
}

void CpuBackend::index_add_rows(const Desc& table, const Desc& idx, const Desc& src) {
  prof::Scope prof_scope(prof::Cat::Index);
  const int64_t V = table.shape[0], D = table.numel() / std::max<int64_t>(V, 1), n = idx.numel();
  const int64_t* ix = static_cast<const int64_t*>(idx.data);
  dispatch_dtype(table.dtype, "index_add", [&](auto tag) {
    using T = decltype(tag);
    T* t = static_cast<T*>(table.data);
    const T* s = static_cast<const T*>(src.data);
    for (int64_t i = 0; i < n; ++i) {  // serial: rows may repeat
      if (i + kGatherAhead < n) cpu::prefetch_block(t + ix[i + kGatherAhead] * D, 1, D * (int64_t)sizeof(T), 0, true);
      for (int64_t d = 0; d < D; ++d) t[ix[i] * D + d] += s[i * D + d];
    }
  });
}

void CpuBackend::gather_rows(const Desc& out, const Desc& in, const Desc& idx) {
  prof::Scope prof_scope(prof::Cat::Index);
  const int64_t R = rows_of(in), C = cols_of(in), K = cols_of(idx);
  const int64_t* ix = static_cast<const int64_t*>(idx.data);
  for (int64_t i = 0; i < R * K; ++i)
    if (ix[i] < 0 || ix[i] >= C)
      throw std::out_of_range("gather: index " + std::to_string(ix[i]) + " out of range for a dim of size " +
                              std::to_string(C));
  dispatch_dtype(in.dtype, "gather", [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(in.data);
    T* o = static_cast<T*>(out.data);
    for (int64_t r = 0; r < R; ++r)
      for (int64_t k = 0; k < K; ++k) o[r * K + k] = x[r * C + ix[r * K + k]];
  });
}

void CpuBackend::scatter_add_rows(const Desc& gin, const Desc& idx, const Desc& g) {
  prof::Scope prof_scope(prof::Cat::Index);
  const int64_t R = rows_of(gin), C = cols_of(gin), K = cols_of(idx);
  const int64_t* ix = static_cast<const int64_t*>(idx.data);
  dispatch_dtype(gin.dtype, "gather backward", [&](auto tag) {
    using T = decltype(tag);
    T* o = static_cast<T*>(gin.data);
    const T* s = static_cast<const T*>(g.data);
    for (int64_t r = 0; r < R; ++r)
      for (int64_t k = 0; k < K; ++k) o[r * C + ix[r * K + k]] += s[r * K + k];
  });
}

namespace {
// One row of the cross-entropy's gradient: g = s · (p_c - off), then g[t] -= s · on (computed in T and
// stored once, so a bfloat16 g is rounded once), with p_c = prob(c) (exp(x_c - m) · (1/Σ), the forward's
// softmax formula). G is T or bfloat16.
template <typename T, typename G, typename P>
void ce_grad_row(P&& prob, G* __restrict g, int64_t C, T s, T off, T on, int64_t t) {
  using cpu::store;
#pragma omp simd
  for (int64_t c = 0; c < C; ++c) store(g, c, T(s * (prob(c) - off)));
  T v = s * (prob(t) - off);
  v -= s * on;
  store(g, t, v);
}
}  // namespace

void CpuBackend::cross_entropy(const Desc& loss, const Desc& stats, const Desc& logits, const Desc& target,
                               int64_t ignore_index, double eps, const Desc& grad, double grad_scale) {
  prof::Scope prof_scope(prof::Cat::Loss);
  const int64_t N = rows_of(logits), C = cols_of(logits);
  const int64_t* tg = static_cast<const int64_t*>(target.data);
  for (int64_t i = 0; i < N; ++i)
    if (tg[i] != ignore_index && (tg[i] < 0 || tg[i] >= C))
      throw std::out_of_range("cross_entropy: target " + std::to_string(tg[i]) + " at row " + std::to_string(i) +
                              " is outside [0, " + std::to_string(C) + ")");
  dispatch_floating(stats.dtype, "cross_entropy", [&](auto tag) {
    using T = decltype(tag);
    T* st = static_cast<T*>(stats.data);
    T* l = static_cast<T*>(loss.data);
    const T gs = T(grad_scale), off = T(eps / (double)C), on = T(1.0 - eps);
    cpu::with_rows<T>(logits, [&](auto* x) {
      // With `grad`, the row's terms exp(x - m) are kept (in a row buffer) for the gradient's pass.
      auto* g = static_cast<std::remove_const_t<std::remove_pointer_t<decltype(x)>>*>(grad.data);
#pragma omp parallel for schedule(static) if (N * C >= kParallelGrain)
      for (int64_t i = 0; i < N; ++i) {
        thread_local std::vector<T> terms;
        if (g && terms.size() < (size_t)C) terms.resize((size_t)C);
        T* e = g ? terms.data() : nullptr;
        const auto* xr = x + i * C;
        double sum_x = 0;
        T m;
        const double s = row_exp_sum<T>(xr, e, C, m, &sum_x);
        const T inv = T(1.0 / s);
        st[2 * i] = m;
        st[2 * i + 1] = inv;
        if (tg[i] == ignore_index) {
          l[i] = T(0);
          if (g)
            for (int64_t c = 0; c < C; ++c) cpu::store(g + i * C, c, T(0));
          continue;
        }
        const double lse = C == 0 ? -INFINITY : (double)m + std::log(s);
        const double nll = lse - (double)cpu::load(xr, tg[i]);
        const double smooth = lse - sum_x / (double)C;  // mean over classes of -log p_c
        l[i] = T((1.0 - eps) * nll + eps * smooth);
        if (g) ce_grad_row([&](int64_t c) { return e[c] * inv; }, g + i * C, C, gs, off, on, tg[i]);
      }
    });
  });
}

void CpuBackend::cross_entropy_backward(const Desc& glogits, const Desc& gloss, const Desc& logits,
                                        const Desc& stats, const Desc& target, int64_t ignore_index, double eps) {
  prof::Scope prof_scope(prof::Cat::Loss);
  const int64_t N = rows_of(logits), C = cols_of(logits);
  const int64_t* tg = static_cast<const int64_t*>(target.data);
  dispatch_floating(stats.dtype, "cross_entropy backward", [&](auto tag) {
    using T = decltype(tag);
    const T* st = static_cast<const T*>(stats.data);
    const T* gl = static_cast<const T*>(gloss.data);
    const T off = T(eps / (double)C), on = T(1.0 - eps);
    cpu::with_rows<T>(logits, [&](auto* x) {
      cpu::with_rows<T>(glogits, [&](auto* g) {
#pragma omp parallel for schedule(static) if (N * C >= kParallelGrain)
        for (int64_t i = 0; i < N; ++i) {
          auto* gr = g + i * C;
          if (tg[i] == ignore_index) {
            for (int64_t c = 0; c < C; ++c) cpu::store(gr, c, T(0));
            continue;
          }
          const auto* xr = x + i * C;
          const T m = st[2 * i], inv = st[2 * i + 1];
          ce_grad_row([&](int64_t c) { return cpu::vexp(T(cpu::load(xr, c) - m)) * inv; }, gr, C, gl[i], off, on,
                      tg[i]);
        }
      });
    });
  });
}

}  // namespace nl
