// The Transformer FFN activation, fused (FusedKernels::bias_relu_dropout): dropout(relu(x + b)) forward
// and, from the saved output alone, its backward with the bias gradient, one pass each over [rows, N]
// instead of the four passes of the ops apart (bias add, ReLU, dropout; dropout, ReLU, bias sum).
// The dropout counters and compare are CpuBackend::dropout's, so the values equal the ops apart. Under
// autocast the FFN's hidden layer is bfloat16: the forward writes it rounded once and the backward
// reads it (and writes the gradient fc1's products read) in bfloat16, each through a float32 row buffer
// in L1, so neither needs a separate cast pass.
#include <type_traits>
#include <vector>

#include "backends/cpu/bf16_convert.h"

#include "backends/cpu/counter_rng.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/row_chunks.h"
#include "backends/cpu/threads.h"
#include "backends/profiler.h"

namespace nl {

namespace {
// Row r of a [rows, N] operand that may be bfloat16 beside float32 compute type T: where the kernel
// writes it (T* directly, or a float32 row buffer then rounded once by `flush`) and reads it (widened
// exactly into a row buffer).
template <typename T>
struct MaybeBf16Rows {
  const Desc& d;
  int64_t N;
  bool bf16() const { return d.dtype == DType::BFloat16; }
  T* write_row(int64_t r, std::vector<T>& buf) const {
    if (!bf16()) return static_cast<T*>(d.data) + r * N;
    buf.resize((size_t)N);
    return buf.data();
  }
  void flush(int64_t r, const T* row) const {
    if constexpr (std::is_same_v<T, float>)
      if (bf16()) cpu::float_to_bf16(row, static_cast<uint16_t*>(d.data) + r * N, N);
  }
  const T* read_row(int64_t r, std::vector<T>& buf) const {
    if (!bf16()) return static_cast<const T*>(d.data) + r * N;
    buf.resize((size_t)N);
    if constexpr (std::is_same_v<T, float>) cpu::bf16_to_float(static_cast<const uint16_t*>(d.data) + r * N, buf.data(), N);
    return buf.data();
  }
};

// One row of the backward: o = y > 0 ? g · scale : 0, and a += o when a is set (cpu::ColumnSums).
template <typename T>
void relu_dropout_grad_row(const T* g, const T* y, T* o, T* a, int64_t N, T scale) {
  if (a) {
#pragma omp simd
    for (int64_t j = 0; j < N; ++j) {
      const T v = y[j] <= T(0) ? T(0) : g[j] * scale;
      o[j] = v;
      a[j] += v;
    }
  } else {
#pragma omp simd
    for (int64_t j = 0; j < N; ++j) o[j] = y[j] <= T(0) ? T(0) : g[j] * scale;
  }
}
// The same row with the hidden layer y and the gradient o in bfloat16 (autocast): y widened, the test, the
// column sum of the float32 value and its rounding to o in one loop (the scalar definitions of
// tensor/bfloat16.h vectorise), not a widen pass into a row buffer, the row, and a rounding pass.
void relu_dropout_grad_row_bf16(const float* g, const uint16_t* y, uint16_t* o, float* a, int64_t N, float scale) {
  if (a) {
#pragma omp simd
    for (int64_t j = 0; j < N; ++j) {
      const float v = bf16_bits_to_float(y[j]) <= 0.0f ? 0.0f : g[j] * scale;
      o[j] = float_to_bf16_bits(v);
      a[j] += v;
    }
  } else {
#pragma omp simd
    for (int64_t j = 0; j < N; ++j) o[j] = float_to_bf16_bits(bf16_bits_to_float(y[j]) <= 0.0f ? 0.0f : g[j] * scale);
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
    const MaybeBf16Rows<T> orows{out, N};
    const T scale = T(1.0 / (1.0 - p));
    const cpu::KeepTest kt = cpu::KeepTest::make<double>(seed, p);  // dropout's mask (cpu_dropout.cpp)
    const uint64_t key = kt.key, thr = kt.threshold;
    const T kept = kt.kept_scale(scale);
    // One row; HasBias / Drop are compile-time so that the loop has no conditional loads (omp simd).
    // bf16 out (autocast, float32 x): each value rounded in the loop, no row buffer and flush pass.
    const bool out16 = std::is_same_v<T, float> && orows.bf16();
    auto row = [&](auto has_bias, auto drop, auto to16, int64_t r) {
      thread_local std::vector<T> buf;
      const T* xr = xp + r * N;
      T* o = to16 ? nullptr : orows.write_row(r, buf);
      uint16_t* o16 = to16 ? static_cast<uint16_t*>(out.data) + r * N : nullptr;
      const uint64_t c0 = offset + (uint64_t)(r * N), rkey = key, rthr = thr;  // locals: no per-lane gathers
      const T rkept = kept;
#pragma omp simd
      for (int64_t j = 0; j < N; ++j) {
        T v = xr[j];
        if constexpr (decltype(has_bias)::value) v += bp[j];
        T a = v < T(0) ? T(0) : v;  // NaN stays NaN (PyTorch)
        if constexpr (decltype(drop)::value)
          a = a * (cpu::counter_word(rkey, c0 + (uint64_t)j) >= rthr ? rkept : T(0));  // a dropped NaN stays NaN
        if constexpr (decltype(to16)::value)
          o16[j] = float_to_bf16_bits((float)a);
        else
          o[j] = a;
      }
      if constexpr (!decltype(to16)::value) orows.flush(r, o);
    };
    using Y = std::true_type;
    using No = std::false_type;
    auto rows = [&](auto to16) {
#pragma omp parallel for schedule(static) if (R * N >= kParallelGrain)
      for (int64_t r = 0; r < R; ++r) {
        if (bp && p > 0)
          row(Y{}, Y{}, to16, r);
        else if (bp)
          row(Y{}, No{}, to16, r);
        else if (p > 0)
          row(No{}, Y{}, to16, r);
        else
          row(No{}, No{}, to16, r);
      }
    };
    if (out16)
      rows(Y{});
    else
      rows(No{});
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
    const MaybeBf16Rows<T> yrows{out, N}, grows{gx, N};
    const T scale = T(1.0 / (1.0 - p));
    chunks.run([&](int64_t r0, int64_t r1, double* partials) {
      std::vector<T> ybuf, gbuf;  // row buffers of a bfloat16 out / gx (allocated on first use, per chunk)
      cpu::ColumnSums<T> cols(partials, N);
      if constexpr (std::is_same_v<T, float>)
        if (yrows.bf16() && grows.bf16()) {  // autocast's FFN: both rows in bfloat16, one loop
          const uint16_t* yp = static_cast<const uint16_t*>(out.data);
          uint16_t* op = static_cast<uint16_t*>(gx.data);
          for (int64_t r = r0; r < r1; ++r) {
            relu_dropout_grad_row_bf16(gp + r * N, yp + r * N, op + r * N, cols.row(), N, scale);
            cols.next();
          }
          cols.finish();
          return;
        }
      for (int64_t r = r0; r < r1; ++r) {
        T* o = grows.write_row(r, gbuf);
        relu_dropout_grad_row(gp + r * N, yrows.read_row(r, ybuf), o, cols.row(), N, scale);
        cols.next();
        grows.flush(r, o);
      }
      cols.finish();
    });
    if (want_b) {
      const double* acc = chunks.total();
      T* gb = static_cast<T*>(gbias.data);
      for (int64_t j = 0; j < N; ++j) gb[j] = T(acc[(size_t)j]);
    }
  });
}

}  // namespace nl
