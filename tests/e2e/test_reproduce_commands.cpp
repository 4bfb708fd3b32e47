// The reproduce commands through the `normlab` binary: `reproduce mnist` on the experiment runner
// trains tiny real runs once and reuses them on a second call; `reproduce xu2019` names a missing data
// set before any training.
#include <catch2/catch.hpp>

#include "cli_util.h"

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "tasks/mnist.h"
#include "backends/mixed_precision.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using nltest::run_cli;
using Catch::Matchers::Contains;

namespace {
std::string read(const fs::path& p) {
  std::ifstream f(p);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}
}  // namespace

TEST_CASE("reproduce mnist: tiny runs train once and are reused on a second call", "[e2e][experiment]") {
  NL_SKIP_IF_MISSING(nlapp::kDefaultMnistData);
  const fs::path out = nltest::temp_dir("reproduce-mnist");
  const std::string cmd = "reproduce mnist --variants layernorm,none --seeds 1 --max-update 3 --quiet --out " + out.string() +
                          " --registry " + (out / "registry").string();
  auto [rc, text] = run_cli(cmd);
  INFO(text);
  REQUIRE(rc == 0);
  CHECK_THAT(text, Contains("[run 1 of 2] layernorm-seed1") && Contains("[run 2 of 2] none-seed1"));
  CHECK(fs::exists(out / "runs" / "none-seed1" / "checkpoint_last.safetensors"));
  const std::string md = read(out / "results.md");
  CHECK_THAT(md, Contains("| layernorm") && Contains("99.13"));  // the paper's LayerNorm accuracy beside ours
  auto [rc2, text2] = run_cli(cmd);
  INFO(text2);
  CHECK(rc2 == 0);
  CHECK_THAT(text2, Contains("2 already finished") && !Contains("[run "));
  CHECK(read(out / "results.md") == md);
  // Recorded in the registry: a fresh working folder reuses the records.
  CHECK(fs::exists(out / "registry" / "mnist" / "default" / "none" / "seed1.json"));
  fs::remove_all(out / "runs");
  auto [rc3, text3] = run_cli(cmd);
  INFO(text3);
  CHECK(rc3 == 0);
  CHECK_THAT(text3, Contains("2 already finished") && !Contains("[run "));
  // --no-registry trains again and records nothing new.
  auto [rc4, text4] = run_cli("reproduce mnist --variants none --seeds 1 --max-update 3 --quiet --no-registry --out " +
                              (out / "fresh").string());
  INFO(text4);
  CHECK(rc4 == 0);
  CHECK_THAT(text4, Contains("[run 1 of 1] none-seed1"));
  fs::remove_all(out);
}

TEST_CASE("reproduce mnist: the default working folder is one per registry column (config, precision)",
          "[e2e][experiment]") {
  NL_SKIP_IF_MISSING(nlapp::kDefaultMnistData);
  const fs::path cwd = nltest::temp_dir("reproduce-columns");
  fs::create_directories(cwd);
  const std::string cmd = "reproduce mnist --variants layernorm --seeds 1 --max-update 2 --quiet --no-registry";
  const std::string in_cwd = "cd " + cwd.string() + " &&";
  // float32, then the same runs in mixed precision: their checkpoints must not meet (a resume in the other
  // precision is refused), so each column trains in its own folder.
  auto [rc, text] = run_cli(cmd, in_cwd);
  INFO(text);
  REQUIRE(rc == 0);
  CHECK(fs::exists(cwd / "runs" / "reproduce-mnist" / "default" / "runs" / "layernorm-seed1"));
  if (nl::cpu_bf16_products_available()) {
    auto [rc2, text2] = run_cli(cmd + " --bf16", in_cwd);
    INFO(text2);
    CHECK(rc2 == 0);
    CHECK(fs::exists(cwd / "runs" / "reproduce-mnist" / "default+bf16" / "runs" / "layernorm-seed1"));
  }
  auto [rc3, text3] = run_cli(cmd + " --config one-epoch", in_cwd);
  INFO(text3);
  CHECK(rc3 == 0);
  CHECK(fs::exists(cwd / "runs" / "reproduce-mnist" / "one-epoch" / "runs" / "layernorm-seed1"));
  fs::remove_all(cwd);
}

TEST_CASE("reproduce xu2019: missing data and an unknown --tasks stop the start", "[e2e][experiment]") {
  const fs::path out = nltest::temp_dir("reproduce-xu");
  auto [rc, text] = run_cli("reproduce xu2019 --tasks rt --max-update 1 --data-bin /nonexistent/bin --no-registry --out " + out.string());
  INFO(text);
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("experiment run 'rt/none-seed1' (task cls, config rt)") && Contains("/nonexistent/bin/rt"));
  CHECK_FALSE(fs::exists(out / "runs" / "rt"));
  auto [rc3, text3] = run_cli("reproduce xu2019 --tasks nope");
  CHECK(rc3 != 0);
  CHECK_THAT(text3, Contains("--tasks") && Contains("nope"));
  fs::remove_all(out);
}
