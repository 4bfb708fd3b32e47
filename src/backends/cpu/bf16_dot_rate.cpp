// The bfloat16 dot-product rate against the float32 FMA rate of one core, and the choice of the
// bfloat16 products' path built on it (bf16_dot_rate.h).
#include "backends/cpu/bf16_dot_rate.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "backends/cpu/cpu_features.h"
#include "backends/mixed_precision.h"

#if defined(__x86_64__)
#include "backends/cpu/avx512_intrinsics.h"
#endif

namespace nl::cpu {
namespace {

constexpr int kChains = 12;         // independent accumulators: more than latency × throughput of either
constexpr long kIterations = 4000;  // 48k instructions a run: ~10-60 µs
volatile float g_sink = 0;

#if defined(__x86_64__)
// Seconds for kIterations × kChains multiply-adds of one instruction in independent chains: vdpbf16ps
// when `bf16`, else vfmadd231ps (called only on a CPU with AVX512_BF16). The first lane of the sum of the
// accumulators goes to g_sink, so the timed loops are not dead code.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) double time_chains(bool bf16) {
  __m512 acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = _mm512_setzero_ps();
  const __m512 x = _mm512_set1_ps(0.5f), y = _mm512_set1_ps(1e-3f);
  const __m512bh xb = (__m512bh)_mm512_set1_epi16(0x3f80);  // bfloat16 1.0
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < kIterations; ++i) {
    if (bf16)
#pragma GCC unroll 12
      for (int j = 0; j < kChains; ++j) acc[j] = _mm512_dpbf16_ps(acc[j], xb, xb);
    else
#pragma GCC unroll 12
      for (int j = 0; j < kChains; ++j) acc[j] = _mm512_fmadd_ps(acc[j], x, y);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (int j = 1; j < kChains; ++j) acc[0] = _mm512_add_ps(acc[0], acc[j]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, acc[0]);
  g_sink = g_sink + lanes[0];
  return seconds;
}
#endif

Bf16DotRate measure() {
  Bf16DotRate r;
#if defined(__x86_64__)
  if (!cpu_features().avx512_bf16) return r;
  double best_dot = 1e9, best_fma = 1e9;
  for (int run = 0; run < 5; ++run) {  // alternating, so a frequency change or a preemption hits both
    best_dot = std::min(best_dot, time_chains(true));
    best_fma = std::min(best_fma, time_chains(false));
  }
  const double instructions = (double)kIterations * kChains;
  r.bf16_gflops = instructions * 64.0 / best_dot * 1e-9;
  r.fma_gflops = instructions * 32.0 / best_fma * 1e-9;
#endif
  return r;
}

}  // namespace

const Bf16DotRate& bf16_dot_rate() {
  static const Bf16DotRate r = measure();
  return r;
}

const Bf16ProductsChoice& bf16_products_choice() {
  static const Bf16ProductsChoice fallback{false, "NORMLAB_BF16_FALLBACK is set"},
      forced_float32{false, "NORMLAB_BF16_PRODUCTS=float32"}, forced_native{true, "NORMLAB_BF16_PRODUCTS=native"};
  const auto& f = cpu_features();
  const bool hardware = f.avx512_bf16 || f.amx_bf16;
  if (bf16_fallback_forced()) return fallback;
  if (const char* v = std::getenv("NORMLAB_BF16_PRODUCTS"); v && *v) {
    if (std::strcmp(v, "float32") == 0) return forced_float32;
    if (std::strcmp(v, "native") != 0)
      throw std::invalid_argument(std::string("NORMLAB_BF16_PRODUCTS='") + v +
                                  "' is not a choice: use native, float32, or unset it (chosen by this CPU)");
    if (!hardware)
      throw std::invalid_argument(
          "NORMLAB_BF16_PRODUCTS=native, but this CPU has no AVX512_BF16 or AMX-BF16: unset it (the products then "
          "run in float32 on the widened operands)");
    return forced_native;
  }
  static const Bf16ProductsChoice by_cpu = [&]() -> Bf16ProductsChoice {  // measured once
    if (!hardware) return {false, "no AVX512_BF16 or AMX-BF16 on this CPU"};
    if (f.amx_bf16 && request_amx_permission()) return {true, "AMX-BF16"};
    const Bf16DotRate& r = bf16_dot_rate();
    const double ratio = r.fma_gflops > 0 ? r.bf16_gflops / r.fma_gflops : 0;
    char buf[160];
    std::snprintf(buf, sizeof buf, "vdpbf16ps at %.1fx the float32 FMA rate (%.0f against %.0f GFLOP/s a core)",
                  ratio, r.bf16_gflops, r.fma_gflops);
    return {ratio >= 1.0, buf};
  }();
  return by_cpu;
}

}  // namespace nl::cpu
