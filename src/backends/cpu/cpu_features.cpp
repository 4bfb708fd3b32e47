// CPU feature detection for the bfloat16 kernels (CPUID leaves 7.0 / 7.1, XGETBV) and the AMX
// permission request. References: Intel SDM vol. 2A (CPUID), Linux Documentation/arch/x86/xstate.rst.
#include "backends/cpu/cpu_features.h"

#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define NL_X86 1
#endif
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "backends/mixed_precision.h"

namespace nl::cpu {
namespace {

#ifdef NL_X86
unsigned long long xgetbv0() {
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((unsigned long long)hi << 32) | lo;
}
#endif

CpuFeatures detect() {
  CpuFeatures f;
#ifdef NL_X86
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = c & (1u << 27), fma = c & (1u << 12);
  if (!osxsave) return f;
  const unsigned long long xcr0 = xgetbv0();
  const bool ymm_os = (xcr0 & 0x6) == 0x6;             // SSE + AVX state
  const bool zmm_os = ymm_os && (xcr0 & 0xe0) == 0xe0;  // opmask, ZMM_Hi256, Hi16_ZMM state
  if (__get_cpuid_max(0, nullptr) < 7) return f;
  __cpuid_count(7, 0, a, b, c, d);
  const unsigned b70 = b, d70 = d;
  __cpuid_count(7, 1, a, b, c, d);
  const unsigned a71 = a;
  f.avx2 = ymm_os && fma && (b70 & (1u << 5));
  f.avx512 = zmm_os && (b70 & (1u << 16)) && (b70 & (1u << 30)) && (b70 & (1u << 31));  // F, BW, VL
  f.avx512_bf16 = f.avx512 && (b70 & (1u << 17)) && (a71 & (1u << 5));  // with DQ (vfpclassps), as every such CPU
  f.amx_bf16 = (d70 & (1u << 22)) && (d70 & (1u << 24));  // AMX-BF16, AMX-TILE
#endif
  return f;
}

bool request_amx_once() {
#if defined(__linux__) && defined(__x86_64__)
  if (!cpu_features().amx_bf16) return false;
  constexpr long kArchGetXcompPerm = 0x1022, kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  unsigned long long mask = 0;
  if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &mask) == 0 && (mask & (1ull << kXfeatureXtiledata))) return true;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) return false;
  mask = 0;
  return syscall(SYS_arch_prctl, kArchGetXcompPerm, &mask) == 0 && (mask & (1ull << kXfeatureXtiledata));
#else
  return false;
#endif
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

bool bf16_fallback_forced() {
  const char* v = std::getenv("NORMLAB_BF16_FALLBACK");
  return v && *v && std::strcmp(v, "0") != 0;
}

bool request_amx_permission() {
  static const bool granted = request_amx_once();
  return granted;
}

}  // namespace nl::cpu

namespace nl {
bool cpu_native_bf16() {
  const auto& f = cpu::cpu_features();
  return (f.avx512_bf16 || f.amx_bf16) && !cpu::bf16_fallback_forced();
}
}  // namespace nl
