// Uniform random fills round lo + (hi - lo) * u as a multiply and then an add on every device, so a
// compiler that contracts them into a fused multiply-add (GCC with -march=native, nvcc by default) cannot
// change the bits: the CPU kernel (cpu_random.cpp, -ffp-contract=off) and the fake device are checked
// here, the CUDA kernel (explicit __dmul_rn / __dadd_rn) in cuda_core_kernels.cpp with the same check.
#include <catch2/catch.hpp>

#include "backends/core_only_backend.h"
#include "backends/random_rounding_check.h"

using namespace nl;

TEST_CASE("uniform fills round the product and the sum apart (no fused multiply-add)", "[kernels][random][threads2]") {
  // 70000 values: above the parallel grain, so the OpenMP path is the one checked.
  CHECK(nltest::uniform_rounding_mismatches(cpu_backend(), Device::cpu(), 70000, 42, 0) == 0);
  CHECK(nltest::uniform_rounding_mismatches(cpu_backend(), Device::cpu(), 1000, 7, 123456789) == 0);
  nltest::FakeDevice fd;
  CHECK(nltest::uniform_rounding_mismatches(backend_for(DeviceType::CUDA), Device::cuda(0), 4096, 42, 5) == 0);
}

TEST_CASE("normal fills round mean + std * z apart", "[kernels][random]") {
  const double mean = 0.1, sd = 0.7;
  const int64_t n = 4096;
  Tensor t = Tensor::empty({n}, DType::Float64);
  cpu_backend().random(t.desc(), true, mean, sd, 9, 0);
  const auto got = t.to_vector<double>();
  int64_t bad = 0, fused_differs = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t c = (uint64_t)i;
    const double u1 = cpu::uniform01(9, 2 * c), u2 = cpu::uniform01(9 ^ 0x5851F42D4C957F2Dull, 2 * c + 1);
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
    bad += got[(size_t)i] != nltest::rounded_apart(mean, sd, z);
    fused_differs += std::fma(sd, z, mean) != nltest::rounded_apart(mean, sd, z);
  }
  REQUIRE(fused_differs > 0);
  CHECK(bad == 0);
}
