// CPU counter-based random fills (uniform and normal), the same numbers as every other device for one
// (seed, offset) (counter_rng.h). Compiled with -ffp-contract=off (CMakeLists.txt): lo + (hi - lo) * u
// must be rounded as a multiply and then an add, never fused into one multiply-add, as the CUDA kernel
// does explicitly (add_mul_rounded), so the bits agree whatever the compiler's flags.
#include <cmath>
#include <stdexcept>

#include "backends/cpu/counter_rng.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/threads.h"
#include "backends/profiler.h"

namespace nl {

void CpuBackend::random(const Desc& out, bool normal, double lo, double hi, uint64_t seed, uint64_t offset) {
  prof::Scope prof_scope(prof::Cat::Random);
  if (!out.contiguous()) throw std::invalid_argument("random: output must be contiguous");
  dispatch_floating(out.dtype, "random", [&](auto tag) {
    using T = decltype(tag);
    T* o = static_cast<T*>(out.data);
    const int64_t n = out.numel();
#pragma omp parallel for schedule(static) if (n >= kParallelGrain)
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t c = offset + (uint64_t)i;
      if (normal) {  // Box-Muller on two independent uniforms of this counter
        const double u1 = cpu::uniform01(seed, 2 * c), u2 = cpu::uniform01(seed ^ 0x5851F42D4C957F2Dull, 2 * c + 1);
        o[i] = T(cpu::add_mul_rounded(lo, hi, std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2)));
      } else {
        o[i] = T(cpu::add_mul_rounded(lo, hi - lo, cpu::uniform01(seed, c)));
      }
    }
  });
}

}  // namespace nl
