// CPU dropout kernels: dropout and the residual connection around it (dropout_add), with the mask
// regenerated from the counter-based stream (counter_rng.h). Compiled with -ffp-contract=off (CMakeLists.txt):
// residual + x * scale must be rounded as the two ops apart (a multiply, then an add), never as one fused
// multiply-add, so that dropout_add gives the bits of dropout followed by add (a test compares them).
#include <algorithm>
#include <stdexcept>
#include <string>

#include "backends/cpu/counter_rng.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/threads.h"
#include "backends/profiler.h"

namespace nl {

namespace {
// Dropout's kernel, alone (residual.data == nullptr: out = dropout(in)) or with the residual connection
// (out = residual + dropout(in)); element i kept when uniform01(seed, offset + i) > p (tested on
// integers: cpu::KeepTest).
void dropout_kernel(const char* name, const Desc& out, const Desc& residual, const Desc& in, double p, uint64_t seed,
                    uint64_t offset) {
  prof::Scope prof_scope(prof::Cat::Random);
  const bool add = residual.data != nullptr;
  if (!out.contiguous() || !in.contiguous() || out.numel() != in.numel() || out.dtype != in.dtype ||
      (add && (!residual.contiguous() || residual.numel() != in.numel() || residual.dtype != in.dtype)))
    throw std::invalid_argument(std::string(name) + ": " + (add ? "residual, " : "") +
                                "input and output must be contiguous with the same size and dtype");
  dispatch_floating(in.dtype, name, [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(in.data);
    const T* r = static_cast<const T*>(residual.data);
    T* o = static_cast<T*>(out.data);
    const T scale = T(1.0 / (1.0 - p));
    const int64_t n = in.numel();
    const cpu::KeepTest kt = cpu::KeepTest::make<double>(seed, p);
    const T kept = kt.kept_scale(scale);
    const uint64_t key = kt.key, thr = kt.threshold;
    // Blocks of consecutive counters, each with its own counter product m (counter_word_at).
    constexpr int64_t kBlock = 4096;
    const int64_t nb = (n + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (n >= kParallelGrain)
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t i0 = b * kBlock, i1 = std::min(n, i0 + kBlock);
      uint64_t m = (offset + (uint64_t)i0) * cpu::kCounterMul;
      if (add) {
#pragma omp simd linear(m : cpu::kCounterMul)
        for (int64_t i = i0; i < i1; ++i) {
          o[i] = r[i] + x[i] * (cpu::counter_word_at(key, m) >= thr ? kept : T(0));
          m += cpu::kCounterMul;
        }
      } else {
#pragma omp simd linear(m : cpu::kCounterMul)
        for (int64_t i = i0; i < i1; ++i) {
          o[i] = x[i] * (cpu::counter_word_at(key, m) >= thr ? kept : T(0));
          m += cpu::kCounterMul;
        }
      }
    }
  });
}
}  // namespace

void CpuBackend::dropout(const Desc& out, const Desc& in, double p, uint64_t seed, uint64_t offset) {
  dropout_kernel("dropout", out, Desc{}, in, p, seed, offset);
}

void CpuBackend::dropout_add(const Desc& out, const Desc& residual, const Desc& in, double p, uint64_t seed,
                             uint64_t offset) {
  dropout_kernel("dropout_add", out, residual, in, p, seed, offset);
}

}  // namespace nl
