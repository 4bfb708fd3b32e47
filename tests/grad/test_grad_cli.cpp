// The `normlab grad` commands fail cleanly (message, non-zero exit) on bad input.
#include <catch2/catch.hpp>

#include "cli_util.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;
using nltest::run_cli;
using Catch::Matchers::Contains;


TEST_CASE("grad cli: explain runs, bad input exits non-zero with a clear message", "[grad][cli]") {
  auto [rc0, t0] = run_cli("grad explain --norm detachnorm --H 4");
  CHECK(rc0 == 0);
  CHECK_THAT(t0, Contains("(a) Tape") && Contains("DetachNorm"));
  auto [rc1, t1] = run_cli("grad explain --norm batchnorm");
  CHECK(rc1 != 0);
  CHECK_THAT(t1, Contains("unknown norm 'batchnorm'"));
  auto [rc2, t2] = run_cli("grad explain --norm layernorm --H 1");
  CHECK(rc2 != 0);
  CHECK_THAT(t2, Contains("--H") && Contains("2 to 4096"));
  auto [rc3, t3] = run_cli("grad stats --norm layernorm,bogus --samples 2");
  CHECK(rc3 != 0);
  CHECK_THAT(t3, Contains("unknown norm 'bogus'"));
  auto [rc4, t4] = run_cli("grad probe mnist --data /nonexistent/folder --steps 1");
  CHECK(rc4 != 0);
  CHECK_THAT(t4, Contains("not found"));
  auto [rc5, t5] = run_cli("grad explain --norm layernorm --estimator torch");
  CHECK(rc5 != 0);
  CHECK_THAT(t5, Contains("--estimator"));
}
