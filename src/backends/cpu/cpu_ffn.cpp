// The Transformer FFN activation, fused (FusedKernels::bias_relu_dropout): dropout(relu(x + b)) forward
// and, from the saved output alone, its backward with the bias gradient, one pass each over [rows, N]
// instead of the four passes of the ops apart (bias add, ReLU, dropout; dropout, ReLU, bias sum).
// The dropout counters and compare are CpuBackend::dropout's, so the values equal the ops apart. Under
// autocast the FFN's hidden layer is bfloat16: the forward writes it rounded once and the backward
// reads it (and writes the gradient fc1's products read) in bfloat16, widening and rounding each element
// inside the loops, so neither needs a separate cast pass.
#include "backends/cpu/avx512_intrinsics.h"  // first: GCC 12's intrinsics warnings

#include <type_traits>

#include "backends/cpu/bf16_simd.h"
#include "backends/cpu/counter_rng.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/row_chunks.h"
#include "backends/cpu/threads.h"
#include "backends/cpu/typed_rows.h"
#include "backends/profiler.h"

namespace nl {

namespace {
using cpu::load;
using cpu::store;
using cpu::with_rows;

// One row of the backward: o = y > 0 ? g · scale : 0, and a += o (before any rounding of o) when a is set
// (cpu::ColumnSums).
template <typename T, typename Y, typename O>
void relu_dropout_grad_row(const T* g, const Y* y, O* o, T* a, int64_t N, T scale) {
#if defined(__AVX512BF16__) && defined(__AVX512DQ__) && defined(__AVX512BW__) && defined(__AVX512VL__)
  // bfloat16 y and o (the FFN under autocast): 32 lanes a step, o rounded by vcvtne2ps2bf16 (the same bits
  // as store(); the auto-vectorised integer rounding cost more than the rest of the row), the tail below
  if constexpr (std::is_same_v<T, float> && std::is_same_v<Y, uint16_t> && std::is_same_v<O, uint16_t>) {
    const __m512 vs = _mm512_set1_ps(scale), zero = _mm512_setzero_ps();
    const auto lanes = [&](int64_t j) {  // 16 lanes of o, in float32
      const __m512 yv = _mm512_castsi512_ps(
          _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(y + j))), 16));
      // y <= 0 gives 0, anything else (NaN too) g · scale, as the scalar loop
      const __m512 v = _mm512_mask_mul_ps(zero, _mm512_cmp_ps_mask(yv, zero, _CMP_NLE_UQ), _mm512_loadu_ps(g + j), vs);
      if (a) _mm512_storeu_ps(a + j, _mm512_add_ps(_mm512_loadu_ps(a + j), v));
      return v;
    };
    int64_t j = 0;
    for (; j + 32 <= N; j += 32) {
      const __m512 lo = lanes(j), hi = lanes(j + 16);
      _mm512_storeu_si512(o + j, cpu::round32_avx512bf16(lo, hi));
    }
    g += j, y += j, o += j, N -= j;
    if (a) a += j;
  }
#endif
  if (a) {
#pragma omp simd
    for (int64_t j = 0; j < N; ++j) {
      const T v = load(y, j) <= T(0) ? T(0) : g[j] * scale;
      store(o, j, v);
      a[j] += v;
    }
  } else {
#pragma omp simd
    for (int64_t j = 0; j < N; ++j) store(o, j, load(y, j) <= T(0) ? T(0) : g[j] * scale);
  }
}
}  // namespace

void CpuBackend::bias_relu_dropout(const Desc& out, const Desc& x, const Desc& bias, double p, uint64_t seed,
                                   uint64_t offset) {
  prof::Scope prof_scope(prof::Cat::Elementwise);
  check_bias_relu_args(x, out, bias, p, "bias_relu_dropout");
  const int64_t N = x.shape[x.ndim - 1], R = N ? x.numel() / N : 0;
  dispatch_floating(x.dtype, "bias_relu_dropout", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = static_cast<const T*>(x.data);
    const T* bp = static_cast<const T*>(bias.data);
    const T scale = T(1.0 / (1.0 - p));
    const cpu::KeepTest kt = cpu::KeepTest::make<double>(seed, p);  // dropout's mask (cpu_dropout.cpp)
    const uint64_t key = kt.key, thr = kt.threshold;
    const T kept = kt.kept_scale(scale);
    with_rows<T>(out, [&](auto* op) {
      // One row; HasBias / Drop are compile-time so that the loop has no conditional loads (omp simd).
      auto row = [&](auto has_bias, auto drop, int64_t r) {
        const T* xr = xp + r * N;
        auto* o = op + r * N;
        const uint64_t rkey = key, rthr = thr;  // locals: no per-lane gathers
        uint64_t m = (offset + (uint64_t)(r * N)) * cpu::kCounterMul;  // counter_word_at's product
        const T rkept = kept;
#pragma omp simd linear(m : cpu::kCounterMul)
        for (int64_t j = 0; j < N; ++j) {
          T v = xr[j];
          if constexpr (decltype(has_bias)::value) v += bp[j];
          T a = v < T(0) ? T(0) : v;  // NaN stays NaN (PyTorch)
          if constexpr (decltype(drop)::value)
            a = a * (cpu::counter_word_at(rkey, m) >= rthr ? rkept : T(0));  // a dropped NaN stays NaN
          store(o, j, a);
          m += cpu::kCounterMul;
        }
      };
      using Y = std::true_type;
      using No = std::false_type;
#pragma omp parallel for schedule(static) if (R * N >= kParallelGrain)
      for (int64_t r = 0; r < R; ++r) {
        if (bp && p > 0)
          row(Y{}, Y{}, r);
        else if (bp)
          row(Y{}, No{}, r);
        else if (p > 0)
          row(No{}, Y{}, r);
        else
          row(No{}, No{}, r);
      }
    });
  });
}

void CpuBackend::bias_relu_dropout_backward(const Desc& gx, const Desc& gbias, const Desc& gout, const Desc& out,
                                            double p) {
  prof::Scope prof_scope(prof::Cat::Elementwise);
  check_bias_relu_args(gout, gx, gbias, p, "bias_relu_dropout_backward");
  check_bias_relu_args(gout, out, Desc{}, p, "bias_relu_dropout_backward");
  const int64_t N = gx.shape[gx.ndim - 1], R = N ? gx.numel() / N : 0;
  const bool want_b = gbias.data != nullptr;
  cpu::RowChunks chunks(R, N, want_b ? N : 0);  // per chunk: the bias gradient's partial sums
  dispatch_floating(gout.dtype, "bias_relu_dropout_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* gp = static_cast<const T*>(gout.data);
    const T scale = T(1.0 / (1.0 - p));
    with_rows<T>(out, [&](auto* yp) {
      with_rows<T>(gx, [&](auto* op) {
        chunks.run([&](int64_t r0, int64_t r1, double* partials) {
          cpu::ColumnSums<T> cols(partials, N);
          for (int64_t r = r0; r < r1; ++r) {
            relu_dropout_grad_row(gp + r * N, yp + r * N, op + r * N, cols.row(), N, scale);
            cols.next();
          }
          cols.finish();
        });
      });
    });
    if (want_b) {
      const double* acc = chunks.total();
      T* gb = static_cast<T*>(gbias.data);
      for (int64_t j = 0; j < N; ++j) gb[j] = T(acc[(size_t)j]);
    }
  });
}

}  // namespace nl
