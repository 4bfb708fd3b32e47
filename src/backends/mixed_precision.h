#pragma once
// Process-wide settings and capabilities of the mixed-precision products (docs/mixed-precision.md):
// whether this CPU computes bfloat16 natively, whether the build can run bfloat16 products on the CPU
// (oneDNN), and the TF32 switch of float32 products on a GPU. Plain functions, no dependencies: the
// CLI (a later --bf16 / --tf32) and the tensor layer's autocast policy read them.
#include <string>

namespace nl {

/// True when the CPU runs bfloat16 products and conversions in hardware (AVX512_BF16 or AMX-BF16) and
/// the environment variable NORMLAB_BF16_FALLBACK is unset, empty or "0". Without it bfloat16 stays
/// correct but is emulated: products upcast to float32 and run on OpenBLAS, so --bf16 is slower than
/// float32 there. NORMLAB_BF16_FALLBACK=1 forces that path on any CPU (tests compare the two); it is
/// read at each call.
bool cpu_native_bf16();
/// True when this build can run bfloat16 products on the CPU (built with oneDNN, libdnnl-dev).
bool cpu_bf16_products_available();
/// One line for --version and logs: the CPU's bfloat16 support, the path the products take and the
/// instruction set oneDNN uses, e.g. "native (AVX512_BF16), oneDNN 2.6.3 on avx512_core_bf16".
std::string cpu_bf16_info();

/// Whether float32 products on a GPU may use TF32 tensor cores (10-bit mantissa inputs, float32
/// accumulation; several times the float32 rate on an A100/H100). Off by default, as in PyTorch
/// (torch.backends.cuda.matmul.allow_tf32); process-wide: forwarded to the CUDA backend
/// (Backend::set_allow_tf32, also when its module is loaded later); the CPU ignores it.
void set_allow_tf32(bool on);
/// The current TF32 setting (false unless set_allow_tf32(true) was called).
bool allow_tf32();

}  // namespace nl
