#pragma once
// Whether this CPU's bfloat16 dot products are worth taking: on Zen 4, vdpbf16ps does twice the
// multiply-adds of a float32 FMA per cycle, but on Intel cores without AMX (Cooper Lake, and Sapphire /
// Emerald Rapids where AMX is hidden, e.g. in a VM) it runs at half the float32 rate — measured on an
// Emerald Rapids core (2026-11-28): 85 GFLOP/s against 174 — and oneDNN's bfloat16 products there are
// slower than OpenBLAS's float32 ones. Measured once per process, in about a millisecond.
#include <string>

namespace nl::cpu {

/// The measurement: multiply-add rates of one core in GFLOP/s (12 independent accumulator chains, the
/// best of 5 alternating runs of each instruction), 0 when the CPU lacks AVX512_BF16.
struct Bf16DotRate {
  double bf16_gflops = 0;  ///< vdpbf16ps zmm: 64 FLOP an instruction
  double fma_gflops = 0;   ///< vfmadd231ps zmm: 32 FLOP an instruction
};
/// Measured on the first call (then cached); all zeros without AVX512_BF16.
const Bf16DotRate& bf16_dot_rate();

/// How Backend::gemm_mixed runs on this CPU: natively (oneDNN / vdpbf16ps / AMX) or as float32
/// products of the exactly widened bfloat16 operands (bf16_float32_gemm.h), and why.
struct Bf16ProductsChoice {
  bool native = false;
  std::string why;  ///< e.g. "AMX-BF16", "vdpbf16ps 2.0x the float32 FMA rate", "NORMLAB_BF16_PRODUCTS=float32"
};
/// The choice, in this order: NORMLAB_BF16_FALLBACK set (float32); NORMLAB_BF16_PRODUCTS=native or
/// float32 (throws std::invalid_argument for another value, or for native on a CPU without AVX512_BF16
/// or AMX); no AVX512_BF16 or AMX (float32); AMX-BF16 usable (native); else native when vdpbf16ps
/// reaches the float32 FMA rate (bf16_dot_rate()). The environment is read at each call; the result
/// refers to a static (no copy: gemm_mixed asks once per product).
const Bf16ProductsChoice& bf16_products_choice();

}  // namespace nl::cpu
