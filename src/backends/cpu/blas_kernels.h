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

namespace nl {

/// The kernel set OpenBLAS chose for this process (`openblas_get_corename()`), e.g. "SkylakeX",
/// "Haswell", "Prescott".
std::string blas_kernel_name();

/// The kernel set to ask for instead of `current` on a CPU with the given features, or "" when `current`
/// is fine. Only the generic fallbacks (the SSE-era and AVX1 sets: Prescott, Core2, Penryn, Dunnington,
/// Nehalem, Atom, Sandybridge, ...) are replaced: "SkylakeX" when the CPU (and the OS) support AVX-512
/// F/BW/DQ/VL, else "Haswell" when they support AVX2 and FMA; a set OpenBLAS chose on purpose (Haswell,
/// Zen, SkylakeX, Cooperlake, ...) is never second-guessed.
std::string blas_kernel_upgrade(const std::string& current, bool avx512, bool avx2_fma);

/// `blas_kernel_upgrade` of the kernel set `current` on this CPU (its features read with CPUID; "" off x86-64).
std::string blas_kernel_upgrade_for(const std::string& current);

/// Call first thing in main(): when OpenBLAS fell back to generic kernels on a CPU that has AVX2 or
/// AVX-512 and the user has not set OPENBLAS_CORETYPE, sets OPENBLAS_CORETYPE to the upgrade and
/// re-executes the program (/proc/self/exe) with the same arguments, so the new process loads OpenBLAS
/// with the fast kernels (one line on stderr says so unless NORMLAB_QUIET_BLAS is set). Returns normally
/// when there is nothing to do, on other systems than Linux/x86-64, or when the re-exec fails (then it
/// warns and the program runs on with the slow kernels). An explicit OPENBLAS_CORETYPE is always kept.
void ensure_blas_kernels(char** argv);

}  // namespace nl
