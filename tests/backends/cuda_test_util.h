#pragma once
// Helpers of the CUDA tests: the device under test, NMSE between a device result and the CPU's, and
// random inputs. Tests run only when a GPU is present (cuda_main.cpp skips otherwise).
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "tensor/ops.h"
#include "tensor/tensor.h"

namespace nltest {

inline const nl::Device kGpu = nl::Device::cuda(0);

/// sum((a - b)^2) / sum(b^2) over host copies (plain squared error when b is all zero); infinities
/// must match exactly.
inline double nmse(const nl::Tensor& a, const nl::Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  const auto x = a.to_vector<double>(), y = b.to_vector<double>();
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isinf(y[i]) || std::isnan(y[i])) {
      REQUIRE((x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i]))));
      continue;
    }
    num += (x[i] - y[i]) * (x[i] - y[i]);
    den += y[i] * y[i];
  }
  return den > 0 ? num / den : num;
}
/// The NMSE bound of the issue: 1e-10 for float64, 1e-6 for float32 (0 for int64: exact).
inline double bound(nl::DType t) { return t == nl::DType::Float64 ? 1e-10 : t == nl::DType::Float32 ? 1e-6 : 0.0; }
/// Checks a device result against the CPU's within bound(dtype).
inline void check_close(const nl::Tensor& gpu, const nl::Tensor& cpu) {
  REQUIRE(gpu.device() == kGpu);
  REQUIRE(gpu.dtype() == cpu.dtype());
  CHECK(nmse(gpu, cpu) <= bound(cpu.dtype()));
}

}  // namespace nltest
