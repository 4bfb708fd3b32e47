// `normlab bench` on an image task whose config uses the step schedule (lnnet capacity-cpu, as
// resnet-cifar cpu): the bench loads no data, so the step schedule's epoch size was read from an
// unloaded batcher and the process crashed; it must time the update with a fixed lr instead.
#include <catch2/catch.hpp>

#include "cli_util.h"

using nltest::run_cli;
using Catch::Matchers::Contains;

TEST_CASE("bench lnnet with a step-schedule config times its steps instead of crashing", "[e2e][bench]") {
  auto [rc, text] = run_cli("bench lnnet --config capacity-cpu --threads 1 --steps 1 --warmup 0 --profile-steps 1 --no-pytorch");
  INFO(text);
  CHECK(rc == 0);
  CHECK_THAT(text, Contains("normlab ms/step") && Contains("time share"));
}
