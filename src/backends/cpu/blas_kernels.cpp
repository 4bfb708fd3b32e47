#include "backends/cpu/blas_kernels.h"

#include <cblas.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace nl {

std::string blas_kernel_name() {
  const char* n = openblas_get_corename();
  return n ? std::string(n) : std::string();
}

std::string blas_kernel_upgrade(const std::string& current, bool avx512, bool avx2_fma) {
  // OpenBLAS's names of the kernel sets below AVX2 (dynamic.c's corename table), compared case-insensitively.
  static const std::array<const char*, 11> generic = {"prescott", "core2",  "penryn",    "dunnington", "nehalem",
                                                      "atom",     "katmai", "coppermine", "northwood",  "banias",
                                                      "sandybridge"};
  std::string c = current;
  std::transform(c.begin(), c.end(), c.begin(), [](unsigned char ch) { return (char)std::tolower(ch); });
  if (std::find(generic.begin(), generic.end(), c) == generic.end()) return "";
  if (avx512) return "SkylakeX";
  return avx2_fma ? "Haswell" : "";
}

std::string blas_kernel_upgrade_for(const std::string& current) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // __builtin_cpu_supports checks CPUID and, for AVX/AVX-512, that the OS saves the registers (XCR0).
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return blas_kernel_upgrade(current, avx512, avx2);
#else
  (void)current;
  return "";
#endif
}

void ensure_blas_kernels(char** argv) {
#if defined(__linux__) && defined(__x86_64__)
  if (std::getenv("OPENBLAS_CORETYPE")) return;  // the user's choice (and the re-executed process)
  const std::string had = blas_kernel_name();
  const std::string want = blas_kernel_upgrade_for(had);
  if (want.empty()) return;
  if (setenv("OPENBLAS_CORETYPE", want.c_str(), 1) != 0) return;
  if (!std::getenv("NORMLAB_QUIET_BLAS"))
    std::cerr << "normlab: OpenBLAS chose its generic '" << had << "' kernels on this CPU, which has "
              << (want == "SkylakeX" ? "AVX-512" : "AVX2") << "; restarting with OPENBLAS_CORETYPE=" << want
              << " (set OPENBLAS_CORETYPE yourself to choose, NORMLAB_QUIET_BLAS=1 to silence this)\n";
  execv("/proc/self/exe", argv);
  const int err = errno;  // only reached when the exec failed
  unsetenv("OPENBLAS_CORETYPE");
  std::cerr << "normlab: warning: could not restart with the " << want << " kernels (" << std::strerror(err)
            << "); running on with OpenBLAS's '" << had << "' kernels, which are several times slower — "
            << "run with OPENBLAS_CORETYPE=" << want << " in the environment\n";
#else
  (void)argv;
#endif
}

}  // namespace nl
