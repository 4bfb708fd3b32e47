#pragma once
// The process-wide runtime controls a program may call: the one thread knob and the OpenBLAS kernel
// check. They are implemented by the CPU backend (backends/cpu/threads.cpp, blas_kernels.cpp), whose
// other headers are internal; apps and embedding programs include this one.
#include <string>

namespace nl {

/// Sets the number of threads used by normlab's loops and by OpenBLAS together (n >= 1), so our loops and
/// BLAS never oversubscribe the cores.
void set_num_threads(int n);
/// Current thread count (default: OMP_NUM_THREADS if set, else 1).
int get_num_threads();

/// The kernel set OpenBLAS chose for this process (`openblas_get_corename()`), e.g. "SkylakeX",
/// "Haswell", "Prescott".
std::string blas_kernel_name();
/// Call first thing in main(): when OpenBLAS fell back to generic kernels on a CPU that has AVX2 or
/// AVX-512 and the user has not set OPENBLAS_CORETYPE, sets OPENBLAS_CORETYPE to the upgrade and
/// re-executes the program (/proc/self/exe) with the same arguments, so the new process loads OpenBLAS
/// with the fast kernels (one line on stderr says so unless NORMLAB_QUIET_BLAS is set). Returns normally
/// when there is nothing to do, on other systems than Linux/x86-64, or when the re-exec fails (then it
/// warns and the program runs on with the slow kernels). An explicit OPENBLAS_CORETYPE is always kept.
/// Why: backends/cpu/blas_kernels.h.
void ensure_blas_kernels(char** argv);

}  // namespace nl
