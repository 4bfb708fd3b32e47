// The global --device option of the normlab binary: checked before any command runs, with an error
// that names the problem and the fix.
#include <catch2/catch.hpp>

#include "backends/backend.h"
#include "cli_util.h"

using Catch::Contains;
using nltest::run_cli;

TEST_CASE("device option: a bad device name or a missing GPU stops before the command runs", "[backend][cli]") {
  auto [rc, out] = run_cli("--device gpu train mnist");
  CHECK(rc == 1);
  CHECK_THAT(out, Contains("unknown device 'gpu'") && Contains("cpu, cuda or cuda:N"));
  auto [rc2, out2] = run_cli("--device cuda:0 train mnist");
  CHECK(rc2 == 1);
  if (nl::device_count(nl::DeviceType::CUDA) == 0)
    CHECK_THAT(out2, Contains("no CUDA device") && Contains("use --device cpu"));
  else
    CHECK_THAT(out2, Contains("do not yet move task models"));
}
