// `normlab bench --rounds N` alternates normlab and the PyTorch twin N times and merges the twin's
// steps over its N processes. The twin is replaced by a stand-in interpreter (a shell script that
// prints the twin's JSON with known step times), so the merge is checked without python3-torch.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <tuple>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "common/cli_common.h"

namespace fs = std::filesystem;
using nltest::run_cli;
using Catch::Matchers::Contains;

namespace {
// A stand-in for python3: called as `<it> <script> --json --threads T --steps K --warmup W ...`, its
// c-th call prints K step times 10c, 10c + 1, ... ms and a peak RSS of 100c MiB.
fs::path fake_python(const fs::path& dir) {
  fs::create_directories(dir);
  const fs::path p = dir / "python";
  std::ofstream(p) << "#!/bin/sh\n"
                      "n=$(cat '" << (dir / "calls").string() << "' 2>/dev/null || echo 0); n=$((n + 1))\n"
                      "echo $n > '" << (dir / "calls").string() << "'\n"
                      "k=$6; all=''; i=0\n"
                      "while [ $i -lt $k ]; do all=\"$all${all:+,}$((10 * n + i))\"; i=$((i + 1)); done\n"
                      "echo 'loading torch'\n"
                      "echo \"{\\\"step_ms\\\": {\\\"median\\\": $((10 * n)), \\\"min\\\": 0, \\\"max\\\": 0, \\\"all\\\": [$all]},"
                      " \\\"step_cpu_ms\\\": {\\\"median\\\": 1, \\\"min\\\": 1, \\\"max\\\": 1, \\\"all\\\": [$all]},"
                      " \\\"items_per_s\\\": 1000, \\\"peak_rss_mib\\\": $((100 * n))}\"\n";
  fs::permissions(p, fs::perms::owner_all);
  return p;
}
}  // namespace

TEST_CASE("bench --rounds alternates with the PyTorch twin and merges its steps", "[e2e][bench]") {
  const fs::path dir = fs::temp_directory_path() / ("normlab-rounds-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const fs::path py = fake_python(dir);
  const fs::path out = dir / "bench.json";
  // 5 steps in 3 rounds: 2, 2 and 1 steps; the twin's calls print [10, 11], [20, 21], [30].
  auto [rc, text] = run_cli("bench mnist --threads 1 --steps 5 --rounds 3 --warmup 0 "
                            "--profile-steps 1 --python " + py.string() + " --json " + out.string());
  INFO(text);
  REQUIRE(rc == 0);
  CHECK_THAT(text, Contains("round 3: normlab median") && Contains("3 alternating rounds"));
  const nlohmann::json r = nlohmann::json::parse(std::ifstream(out))["runs"][0];
  REQUIRE(r["rounds"].size() == 3);
  CHECK(r["rounds"][0]["steps"] == 2);
  CHECK(r["rounds"][2]["steps"] == 1);
  CHECK(r["rounds"][1]["pytorch_median_ms"] == 20.0);  // the twin's own median of its second call
  const nlohmann::json& p = r["pytorch"];
  CHECK(p["step_ms"]["all"] == nlohmann::json::array({10, 11, 20, 21, 30}));
  CHECK(p["step_ms"]["median"] == 20.0);
  CHECK(p["step_ms"]["min"] == 10.0);
  CHECK(p["step_ms"]["max"] == 30.0);
  CHECK(p["peak_rss_mib"] == 300.0);              // the largest of the three processes
  CHECK(p["items_per_s"].get<double>() == Approx(500.0));  // 1000 at the first call's median 10, rescaled to 20
  CHECK(r["normlab"]["step_ms"]["min"].get<double>() > 0);
  // Without --rounds: three rounds when there is a twin, one without (alternation needs two frameworks).
  std::tie(rc, text) = run_cli("bench mnist --threads 1 --steps 4 --warmup 0 --profile-steps 1 --python " + py.string() +
                               " --json " + out.string());
  REQUIRE(rc == 0);
  CHECK(nlohmann::json::parse(std::ifstream(out))["runs"][0]["rounds"].size() == 3);
  std::tie(rc, text) = run_cli("bench mnist --threads 1 --steps 4 --warmup 0 --profile-steps 1 --no-pytorch --json " +
                               out.string());
  REQUIRE(rc == 0);
  CHECK(nlohmann::json::parse(std::ifstream(out))["runs"][0]["rounds"].size() == 1);
  fs::remove_all(dir);
}

TEST_CASE("bench --rounds above --steps is a clear error", "[e2e][bench]") {
  auto [rc, text] = run_cli("bench lnnet --config capacity-cpu --threads 1 --steps 2 --rounds 3 --no-pytorch");
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("--rounds 3 is more than the 2 timed steps"));
}

TEST_CASE("bench --python that cannot be run is an error naming the path and the fix", "[e2e][bench]") {
  // It exited 0 with a dash in the PyTorch column and "install it with: scripts/install-deps.sh --bench".
  CHECK_THROWS_WITH(nlapp::check_python_interpreter("/nonexistent"),
                    Contains("--python /nonexistent cannot be run (no such file)") && Contains("--no-pytorch"));
  CHECK_THROWS_WITH(nlapp::check_python_interpreter(fs::temp_directory_path().string()), Contains("it is a folder"));
  CHECK_THROWS_WITH(nlapp::check_python_interpreter("no-such-python-normlab"), Contains("not found on PATH"));
  CHECK_NOTHROW(nlapp::check_python_interpreter("sh"));  // on PATH, as the shell that runs the twin finds it
  auto [rc, text] = run_cli("bench mnist --threads 1 --steps 1 --warmup 0 --profile-steps 1 --python /nonexistent");
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("--python /nonexistent cannot be run") && !Contains("normlab median"));
  // --no-pytorch does not look at --python.
  std::tie(rc, text) = run_cli("bench mnist --threads 1 --steps 1 --warmup 0 --profile-steps 1 --no-pytorch --python /nonexistent");
  CHECK(rc == 0);
}
