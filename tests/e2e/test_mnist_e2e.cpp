// End to end on real Fashion-MNIST images through the `normlab` binary: training through the task
// registry learns; a run killed with SIGKILL after update 300 and restarted with --resume ends with
// bit-identical tensors in checkpoint_last and identical metrics.jsonl lines; the flags a new user
// tried fail with a clear error instead of silently changing the experiment.
#include <catch2/catch.hpp>

#include "cli_util.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "optim/checkpoint.h"
#include "report/metrics_log.h"
#include "tasks/mnist.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using nltest::run_cli;
using Catch::Matchers::Contains;

namespace {
const fs::path kFashion = nlapp::kDefaultMnistData;



bool has_update(const fs::path& metrics, int64_t u) {
  std::ifstream f(metrics);
  std::string line, key = "\"update\":" + std::to_string(u);
  while (std::getline(f, line))
    if (line.find(key) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST_CASE("e2e: 300 updates of the paper's CNN on Fashion-MNIST learn", "[e2e]") {
  NL_SKIP_IF_MISSING(kFashion);
  fs::path out = nltest::temp_dir("e2e-learn");
  auto [rc, text] = run_cli("train mnist --max-update 300 --quiet --out " + out.string());
  INFO(text);
  REQUIRE(rc == 0);
  auto lines = nlapp::read_metrics_log(out / "metrics.jsonl");
  double first = -1, last = -1;
  for (const auto& l : lines)
    if (l.contains("train_loss")) (first < 0 ? first : last) = l["train_loss"].get<double>();
  CHECK(last < first);
  std::ifstream rf(out / "results.json");
  auto res = nlohmann::json::parse(rf);
  CHECK(res["test"]["acc"].get<double>() > 70.0);
  CHECK(res["updates"] == 300);
  fs::remove_all(out);
}

TEST_CASE("e2e: kill -9 after update 300, --resume: bit-identical checkpoint_last and metrics", "[e2e][resume]") {
  NL_SKIP_IF_MISSING(kFashion);
  const std::string args = " --max-update 600 --save-interval-updates 100 --quiet --out ";
  fs::path a = nltest::temp_dir("e2e-uninterrupted"), b = nltest::temp_dir("e2e-killed");
  REQUIRE(run_cli("train mnist" + args + a.string()).first == 0);

  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::string out = b.string();
    ::execl(NORMLAB_BINARY, NORMLAB_BINARY, "train", "mnist", "--max-update", "600", "--save-interval-updates", "100",
            "--quiet", "--out", out.c_str(), (char*)nullptr);
    ::_exit(127);
  }
  // Kill it once update 300 has been logged (its checkpoint at 300 may or may not be complete).
  for (int i = 0; i < 6000 && !has_update(b / "metrics.jsonl", 300); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  nl::Checkpoint mid = nl::load_checkpoint(b / "checkpoint_last.safetensors");
  const int64_t restart = mid.meta["state"]["updates"];
  CHECK(restart >= 200);
  CHECK(restart < 600);

  auto [rc, text] = run_cli("train mnist" + args + b.string() + " --resume");
  INFO(text);
  REQUIRE(rc == 0);
  nl::TensorMap ta = nl::load_checkpoint(a / "checkpoint_last.safetensors").tensors;
  nl::TensorMap tb = nl::load_checkpoint(b / "checkpoint_last.safetensors").tensors;
  REQUIRE(ta.size() == tb.size());
  for (const auto& [k, v] : ta) {
    INFO(k);
    REQUIRE(tb.count(k));
    CHECK(v.to_vector<double>() == tb.at(k).to_vector<double>());
  }
  auto la = nlapp::read_metrics_log(a / "metrics.jsonl"), lb = nlapp::read_metrics_log(b / "metrics.jsonl");
  REQUIRE(la.size() == lb.size());
  for (size_t i = 0; i < la.size(); ++i) CHECK(la[i] == lb[i]);
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST_CASE("cli: flags a new user tried give a clear error, not another experiment", "[cli]") {
  struct Case {
    std::string args, expect;
  };
  const std::vector<Case> cases = {
      {"train mnist --max-update -5", "--max-update must be a whole number from 0 to"},
      {"train mnist --max-epoch 0", "--max-epoch must be a whole number from 1 to 1000000"},
      {"train mnist --C nan", "--C must be a finite number greater than 0"},
      {"train mnist --lr inf", "--lr must be a finite number greater than 0 and at most 10 (got 'inf')"},
      {"train mnist --seed -1", "--seed must be a whole number from 0 to"},
      {"train mnist --validate-interval-updates -4", "--validate-interval-updates must be a whole number"},
      {"train mnist --out ''", "--out must be a non-empty text"},
      {"train mnist --norm instancenorm", "--norm must be one of: none, layernorm"},
      {"train mnist --threads 0", "--threads must be a whole number from 1 to 256"},
      {"train mnist --config nope", "no config 'nope' for task mnist; available: default"},
      {"train mnist --data /nonexistent/folder --quiet", "dataset-fashion-mnist"},
      {"train nosuchtask", "unknown task 'nosuchtask' for `normlab train`; tasks: mnist"},
      {"train", "needs a task: one of mnist"},
      {"train mnist --bogus 3", "--bogus"},
      {"bench mnist --threads 1,0 --no-pytorch", "--threads"},
      {"grad explain --norm layernorm --H 100000000", "--H"},
      {"grad probe mnist --steps 0", "--steps"},
      {"grad probe --norm layernorm", "`normlab grad probe` takes the task first, then its flags"},
      {"grad probe nosuchtask", "unknown task 'nosuchtask' for `normlab grad probe`"},
      {"report --registry /tmp --docs-root /nonexistent/folder --check", "no README.md or docs/ under '/nonexistent/folder'"},
      {"report --registry /nonexistent/folder --check", "results registry '/nonexistent/folder' not found"},
  };
  for (const auto& c : cases) {
    auto [rc, text] = run_cli(c.args);
    INFO(c.args << " -> " << text);
    CHECK(rc != 0);
    CHECK(rc < 128);  // an error exit, never a crash
    CHECK_THAT(text, Contains(c.expect));
    CHECK_THAT(text, !Contains("000000000000000000000000"));  // no 309-digit ranges
  }
}

TEST_CASE("cli: a corrupt data file is an error naming the file", "[cli]") {
  fs::path bad = nltest::temp_dir("e2e-bad-idx");
  fs::create_directories(bad);
  for (const auto& f : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                        "t10k-labels-idx1-ubyte"})
    std::ofstream(bad / f) << "not an idx file";
  auto [rc, text] = run_cli("train mnist --quiet --data " + bad.string());
  CHECK(rc == 1);
  CHECK_THAT(text, Contains("error:") && Contains("idx"));
  fs::remove_all(bad);
}
