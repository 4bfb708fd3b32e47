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

TEST_CASE("grad cli: AdaNorm's --C and --k are checked as train checks --C", "[grad][cli]") {
  for (const char* args : {"grad explain --norm adanorm --H 4 --C nan", "grad explain --norm adanorm --H 4 --C 0",
                           "grad stats --norm adanorm --H 8 --samples 2 --C -1", "grad stats --norm adanorm --H 8 --samples 2 --C nan"}) {
    auto [rc, t] = run_cli(args);
    INFO(args);
    CHECK(rc != 0);
    CHECK_THAT(t, Contains("--C must be a finite number greater than 0"));
    CHECK_THAT(t, !Contains("Theorem 1"));
  }
  auto [rc, t] = run_cli("grad explain --norm adanorm --H 4 --k nan");
  CHECK(rc != 0);
  CHECK_THAT(t, Contains("--k must be a finite number (got 'nan')"));
}
