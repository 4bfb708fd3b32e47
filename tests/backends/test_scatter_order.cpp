// The scatters (embedding / gather / max-pool backward) add the contributions to one target in index
// order on every device (scatter_order_check.h). Here: the CPU backend and the fake device keep the
// contract, and a backend that adds them in another order -- as float atomicAdd does on a GPU -- is
// caught, which shows that the same check in the CUDA tests fails on atomics-order dependence.
#include <catch2/catch.hpp>

#include <algorithm>

#include "backends/core_only_backend.h"
#include "backends/scatter_order_check.h"

using namespace nl;

namespace {
/// The fake device with scatters that add in reverse index order (one order float atomics may produce).
class ReversedScatterBackend final : public nltest::CoreOnlyBackend {
 public:
  void index_add_rows(const Desc& table, const Desc& idx, const Desc& src) override {
    const int64_t V = table.shape[0], D = table.numel() / std::max<int64_t>(V, 1), n = idx.numel();
    const auto* ix = static_cast<const int64_t*>(idx.data);
    dispatch_floating(table.dtype, "index_add_rows", [&](auto tag) {
      using T = decltype(tag);
      for (int64_t i = n - 1; i >= 0; --i)
        for (int64_t d = 0; d < D; ++d)
          static_cast<T*>(table.data)[ix[i] * D + d] += static_cast<const T*>(src.data)[i * D + d];
    });
  }
  void scatter_add_rows(const Desc& gin, const Desc& idx, const Desc& g) override {
    const int64_t C = gin.shape[gin.ndim - 1], R = gin.numel() / C, K = idx.shape[idx.ndim - 1];
    const auto* ix = static_cast<const int64_t*>(idx.data);
    dispatch_floating(gin.dtype, "scatter_add_rows", [&](auto tag) {
      using T = decltype(tag);
      for (int64_t r = 0; r < R; ++r)
        for (int64_t k = K - 1; k >= 0; --k)
          static_cast<T*>(gin.data)[r * C + ix[r * K + k]] += static_cast<const T*>(g.data)[r * K + k];
    });
  }
};
}  // namespace

TEST_CASE("scatters add in index order on the CPU and the fake device", "[kernels][scatter]") {
  CHECK(nltest::scatter_order_mismatches<float>(Device::cpu(), DType::Float32, 1) == 0);
  CHECK(nltest::scatter_order_mismatches<double>(Device::cpu(), DType::Float64, 2) == 0);
  nltest::FakeDevice fd;
  CHECK(nltest::scatter_order_mismatches<float>(Device::cuda(0), DType::Float32, 3) == 0);
  CHECK(nltest::scatter_order_mismatches<double>(Device::cuda(0), DType::Float64, 4) == 0);
}

TEST_CASE("the scatter order check catches a backend that adds in another order (as atomics do)",
          "[kernels][scatter]") {
  struct Registered {  // the reversed backend in the CUDA slot for this scope
    ReversedScatterBackend b;
    Registered() { register_backend(DeviceType::CUDA, &b); }
    ~Registered() { register_backend(DeviceType::CUDA, nullptr); }
  } reversed;
  CHECK(nltest::scatter_order_mismatches<float>(Device::cuda(0), DType::Float32, 3) >= 10);
  CHECK(nltest::scatter_order_mismatches<double>(Device::cuda(0), DType::Float64, 4) >= 10);
}
