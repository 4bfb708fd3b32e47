// End to end on real Fashion-MNIST images: training lowers the loss and beats chance on held-out
// images; a run stopped and resumed from its checkpoint ends bit-identical to an uninterrupted one;
// the CLI fails cleanly on bad input.
#include <catch2/catch.hpp>

#include "test_paths.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "common/mnist_experiment.h"
#include "optim/checkpoint.h"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {
const fs::path kFashion = nlapp::kDefaultMnistData;

fs::path temp_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("normlab-e2e-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}

const nl::MnistLikeSplits& fashion() {
  static nl::MnistLikeSplits d = nlapp::load_mnist_data(kFashion, nullptr);
  return d;
}
}  // namespace

TEST_CASE("e2e: 300 updates of the paper's CNN on Fashion-MNIST learn", "[e2e]") {
  NL_SKIP_IF_MISSING(fs::path(kFashion));  // Debian package dataset-fashion-mnist
  nlapp::MnistRunConfig c;
  c.norm = "layernorm";
  c.epochs = 1;
  c.max_steps = 300;
  c.eval_every = 150;
  c.quiet = true;
  nlapp::MnistRunResult r = nlapp::run_mnist(c, fashion());
  REQUIRE(!r.diverged);
  REQUIRE(r.updates == 300);
  REQUIRE(r.history.train_loss.size() == 6);  // one point per 50 updates
  const double first = r.history.train_loss.front().second, last = r.history.train_loss.back().second;
  CHECK(last < 0.8 * first);   // the mean loss of updates 251-300 is well below that of 1-50
  CHECK(r.test_acc > 70.0);    // chance is 10%
  CHECK(r.best_valid_acc > 70.0);
}

TEST_CASE("e2e: a resumed run ends exactly where an uninterrupted run does", "[e2e][checkpoint]") {
  NL_SKIP_IF_MISSING(fs::path(kFashion));  // Debian package dataset-fashion-mnist
  nlapp::MnistRunConfig c;
  c.norm = "adanorm";
  c.norm_opts = {{"C", 2.0}};
  c.epochs = 1;
  c.eval_every = 1000000;
  c.save_every = 40;
  c.quiet = true;
  // Uninterrupted: 100 updates.
  const fs::path full = temp_dir("full"), resumed = temp_dir("resumed");
  c.max_steps = 100;
  c.out = full;
  nlapp::run_mnist(c, fashion());
  // Interrupted at 60 (the last checkpoint is at 40; updates 41..60 are lost and redone), then resumed.
  c.out = resumed;
  c.max_steps = 60;
  nlapp::run_mnist(c, fashion());
  c.max_steps = 100;
  c.resume = true;
  nlapp::MnistRunResult r = nlapp::run_mnist(c, fashion());
  CHECK(r.updates == 100);
  auto a = nl::load_checkpoint(full / "last.safetensors");
  auto b = nl::load_checkpoint(c.out / "last.safetensors");
  REQUIRE(a.tensors.size() == b.tensors.size());
  for (auto& [k, t] : a.tensors) {
    INFO(k);
    REQUIRE(b.tensors.count(k));
    CHECK(t.to_vector<double>() == b.tensors.at(k).to_vector<double>());
  }
  // Resuming with another norm into the same folder is refused with a clear message.
  c.norm = "layernorm";
  c.norm_opts = nullptr;
  CHECK_THROWS_WITH(nlapp::run_mnist(c, fashion()), Contains("cannot resume") && Contains("--norm"));
  fs::remove_all(full);
  fs::remove_all(resumed);
}

TEST_CASE("cli: bad input exits non-zero with a clear message", "[cli]") {
  auto run = [](const std::string& args) {
    std::string out = (fs::temp_directory_path() / ("normlab-cli-" + std::to_string(::getpid()) + ".txt")).string();
    int rc = std::system((std::string(NORMLAB_BINARY) + " " + args + " > " + out + " 2>&1").c_str());
    std::ifstream f(out);
    std::string text((std::istreambuf_iterator<char>(f)), {});
    fs::remove(out);
    return std::pair<int, std::string>{rc, text};
  };
  auto [rc1, t1] = run("train mnist --data /nonexistent/folder --quiet");
  CHECK(rc1 != 0);
  CHECK_THAT(t1, Contains("not found") && Contains("dataset-fashion-mnist"));
  auto [rc2, t2] = run("train mnist --norm batchnorm");
  CHECK(rc2 != 0);
  CHECK_THAT(t2, Contains("--norm"));
  auto [rc3, t3] = run("train mnist --epochs 0");
  CHECK(rc3 != 0);
  fs::path bad = fs::temp_directory_path() / ("normlab-bad-" + std::to_string(::getpid()));
  fs::create_directories(bad);
  std::ofstream(bad / "train-images-idx3-ubyte") << "not an idx file";
  auto [rc4, t4] = run("train mnist --quiet --data " + bad.string());
  CHECK(rc4 != 0);
  CHECK_THAT(t4, Contains("error:"));
  fs::remove_all(bad);
}
