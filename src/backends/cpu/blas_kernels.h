#pragma once
// Which GEMM kernels OpenBLAS runs, and a fix for CPUs its detection does not know.
//
// Debian 12's OpenBLAS (0.3.21, built with DYNAMIC_ARCH) picks its kernel set from the CPU model when the
// library loads. On CPUs newer than its tables — e.g. Intel's Emerald Rapids (family 6, model 207), which
// has AVX-512 — it falls back to the SSE3 "Prescott" kernels: measured on such a Xeon, one-thread SGEMM
// ran about 4.5x slower than with the SkylakeX kernels, and PTB training about 3.7x slower.
// The kernel set can only be chosen before the library loads (environment variable OPENBLAS_CORETYPE),
// so a program fixes it by re-executing itself: `ensure_blas_kernels` does that in main().
#include <string>

#include "backends/runtime.h"  // blas_kernel_name and ensure_blas_kernels, the public half

namespace nl {

/// The kernel set to ask for instead of `current` on a CPU with the given features, or "" when `current`
/// is fine. Only the generic fallbacks (the SSE-era and AVX1 sets: Prescott, Core2, Penryn, Dunnington,
/// Nehalem, Atom, Sandybridge, ...) are replaced: "SkylakeX" when the CPU (and the OS) support AVX-512
/// F/BW/DQ/VL, else "Haswell" when they support AVX2 and FMA; a set OpenBLAS chose on purpose (Haswell,
/// Zen, SkylakeX, Cooperlake, ...) is never second-guessed.
std::string blas_kernel_upgrade(const std::string& current, bool avx512, bool avx2_fma);

/// `blas_kernel_upgrade` of the kernel set `current` on this CPU (its features read with CPUID; "" off x86-64).
std::string blas_kernel_upgrade_for(const std::string& current);

}  // namespace nl
