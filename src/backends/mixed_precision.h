#pragma once
// Process-wide settings and capabilities of the mixed-precision products (docs/mixed-precision.md):
// whether this CPU computes bfloat16 natively, whether the build can run bfloat16 products on the CPU
// (oneDNN), and the TF32 switch of float32 products on a GPU. Plain functions, no dependencies: the
// CLI (a later --bf16 / --tf32) and the tensor layer's autocast policy read them.
#include <string>

namespace nl {

/// True when the CPU has bfloat16 instructions (AVX512_BF16 or AMX-BF16) and the environment variable
/// NORMLAB_BF16_FALLBACK is unset, empty or "0": conversions then use vcvtneps2bf16. NORMLAB_BF16_FALLBACK=1
/// forces the emulated path of conversions and products on any CPU (tests compare the two); it is read
/// at each call.
bool cpu_native_bf16();
/// True when the CPU's bfloat16 products run natively (oneDNN, normlab's vdpbf16ps kernel): cpu_native_bf16()
/// and the CPU's products pay — AMX-BF16, or vdpbf16ps at least at the float32 FMA rate, measured once (Zen 4:
/// 2x; Intel cores without AMX: 0.5x). Otherwise they run as float32 products of the widened operands, the
/// same values up to summation order (cpu/bf16_dot_rate.h: NORMLAB_BF16_PRODUCTS=native|float32 overrides;
/// throws std::invalid_argument for another value).
bool cpu_bf16_products_native();
/// True when this build can run bfloat16 products on the CPU (built with oneDNN, libdnnl-dev).
bool cpu_bf16_products_available();
/// One line for --version and logs: the CPU's bfloat16 support, the path the products take and the
/// instruction set oneDNN uses, e.g. "conversions native (AVX512_BF16), products native (vdpbf16ps at 2.0x the
/// float32 FMA rate ...), oneDNN 2.6.3 on avx512_core_bf16".
std::string cpu_bf16_info();

/// Whether float32 products on a GPU may use TF32 tensor cores (10-bit mantissa inputs, float32
/// accumulation; several times the float32 rate on an A100/H100). Off by default, as in PyTorch
/// (torch.backends.cuda.matmul.allow_tf32); process-wide: forwarded to the CUDA backend
/// (Backend::set_allow_tf32, also when its module is loaded later); the CPU ignores it.
void set_allow_tf32(bool on);
/// The current TF32 setting (false unless set_allow_tf32(true) was called).
bool allow_tf32();

}  // namespace nl
