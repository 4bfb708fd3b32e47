#pragma once
// What this x86 CPU (and its OS) supports for bfloat16, detected once with CPUID / XGETBV, and the
// Linux permission request that AMX tile data needs before its first use.
namespace nl::cpu {

/// Instruction-set support relevant to the bfloat16 kernels (all false on non-x86 builds).
struct CpuFeatures {
  bool avx2 = false;         ///< AVX2 + FMA, with OS support for the YMM state
  bool avx512 = false;       ///< AVX-512 F, BW, VL (the "core" set), with OS support for the ZMM state
  bool avx512_bf16 = false;  ///< AVX512_BF16 (vdpbf16ps, vcvtne*ps2bf16) and DQ: Cooper Lake, Sapphire Rapids, Zen 4
  bool amx_bf16 = false;     ///< AMX-TILE + AMX-BF16 in CPUID (Sapphire Rapids and later)
};
/// The features of this CPU, detected on the first call.
const CpuFeatures& cpu_features();

/// True when NORMLAB_BF16_FALLBACK is set to something other than "" or "0" (read at each call).
bool bf16_fallback_forced();

/// On Linux, asks the kernel for permission to use AMX tile data in this process
/// (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), needed since Linux 5.16 before the first
/// tile instruction, which otherwise dies with SIGILL). Idempotent (done once); true when granted, false
/// on a CPU without AMX or when the kernel refuses. oneDNN 2.6 asks as well, in amx::is_available(); we
/// ask before creating the first bfloat16 primitive so that its dispatcher sees AMX as usable either way.
bool request_amx_permission();

}  // namespace nl::cpu
