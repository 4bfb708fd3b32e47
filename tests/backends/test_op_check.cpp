// The op-by-op check (op_check.h) against the fake device: every kernel of the table runs through the
// composite fused kernels and the CPU core kernels in the CUDA slot, and must meet its bound. This is the
// harness's self-test; on a GPU, scripts/gpu-check.sh runs the same table against cuda:0.
#include <catch2/catch.hpp>

#include "backends/core_only_backend.h"
#include "backends/op_check/op_check.h"

TEST_CASE("op check: every kernel on the fake device meets its bound against the CPU", "[backend][opcheck]") {
  nltest::FakeDevice fd;
  const auto results = nltest::opcheck::run_op_checks(nl::Device::cuda(0), nltest::opcheck::op_check_dtypes(), "", 0);
  CHECK(results.size() >= 2 * 80);
  for (const auto& r : results) {
    INFO(r.op << " " << r.dtype << ": nmse " << r.nmse << " (bound " << r.tol << ") " << r.error);
    CHECK(r.pass);
  }
}
