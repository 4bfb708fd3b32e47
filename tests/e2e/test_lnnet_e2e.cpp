// End to end through the `normlab` binary: task lnnet on MNIST-RL and CIFAR-10-RL subsets (skipped when
// ../shared/data lacks them) records its data choices and random labels, rejects G not dividing the
// width, and `reproduce ni2024-capacity` writes its table.
#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using nltest::run_cli;

namespace {
nlohmann::json read_json(const fs::path& p) {
  std::ifstream f(p);
  return nlohmann::json::parse(f);
}
}  // namespace

TEST_CASE("e2e: lnnet on an MNIST-RL subset records its random labels", "[e2e][lnnet]") {
  const fs::path mnist = nltest::data_path("mnist");
  NL_SKIP_IF_MISSING(mnist / "train-images-idx3-ubyte.gz");
  const fs::path out = nltest::temp_dir("e2e-lnnet");
  const std::string common = "train lnnet --data " + mnist.string() +
                             " --train-subset 300 --valid-size 100 --random-labels 5 --width 16 --depth 2 --quiet ";
  auto [rc, text] = run_cli(common + "--max-epoch 2 --norm lng --groups 4 --out " + out.string());
  INFO(text);
  REQUIRE(rc == 0);
  const auto data = read_json(out / "data.json");
  CHECK(data["random_labels"]["seed"] == 5);
  CHECK(data["random_labels"]["train"].size() == 300);
  CHECK(data["normalize"]["mean"].size() == 1);
  const auto res = read_json(out / "results.json");
  CHECK(res["test"]["train_acc"].get<double>() >= 0);
  CHECK(res["settings"]["groups"] == 4);

  auto [rc2, text2] = run_cli(common + "--norm lng --groups 3 --out " + (out / "bad").string());
  CHECK(rc2 != 0);
  CHECK_THAT(text2, Contains("groups") && Contains("16"));
}

TEST_CASE("e2e: reproduce ni2024-capacity writes the table of baselines and G", "[e2e][lnnet]") {
  const fs::path mnist = nltest::data_path("mnist");
  NL_SKIP_IF_MISSING(mnist / "train-images-idx3-ubyte.gz");
  const fs::path out = nltest::temp_dir("e2e-capacity");
  auto [rc, text] = run_cli("reproduce ni2024-capacity --datasets mnist --data " + mnist.string() +
                            " --groups-list 1,4 --train-subset 200 --valid-size 100 --width 16 --depth 1 --max-epoch 1 --seeds 1 "
                            "--quiet --registry " + (out / "registry").string() + " --out " + out.string());
  INFO(text);
  REQUIRE(rc == 0);
  std::ifstream f(out / "results.md");
  const std::string md((std::istreambuf_iterator<char>(f)), {});
  CHECK_THAT(md, Contains("linear classifier") && Contains("linear network") && Contains("LN-G (G = 4)") &&
                     Contains("random labels") && Contains("H (Σ layers)") && Contains("lr × 0.5 every 4 epochs"));
  CHECK(fs::exists(out / "train_acc_vs_groups.svg"));
  CHECK(fs::exists(out / "hessian_vs_groups.svg"));
  // Every run recorded in the registry with H as a test metric of the lnnet task
  const fs::path column = out / "registry" / "ni2024-capacity" / "capacity-cpu-mnist";
  auto record = [&](const std::string& model) { return read_json(column / model / "seed1.json"); };
  CHECK(record("linear-classifier")["test"]["hessian"] == 0);
  CHECK(record("G1")["test"]["hessian"].get<double>() > 0);
  CHECK(record("G4")["test"]["hessian"].get<double>() > 0);
  CHECK(read_json(out / "results.json")["runs"].size() == 4);
  // One seed a side: both claims are judged inconclusive, never "holds" on a single run
  CHECK_THAT(md, Contains("ln-above-linear/mnist") && Contains("lng-above-ln/mnist") && Contains("fewer than 2 seeds"));
  auto [rc2, text2] = run_cli("reproduce ni2024-capacity --datasets mnist --groups-list 3 --width 16 --out " +
                              (out / "bad").string());
  CHECK(rc2 != 0);
  CHECK_THAT(text2, Contains("G = 3 does not divide --width 16"));
}

TEST_CASE("e2e: lnnet on a CIFAR-10 batch records the batches and the validation split", "[e2e][lnnet][cifar10]") {
  const fs::path cifar = nltest::data_path("cifar10");
  NL_SKIP_IF_MISSING(cifar / "data_batch_2.bin.gz");
  const fs::path out = nltest::temp_dir("e2e-lnnet-cifar");
  auto [rc, text] = run_cli("train lnnet --dataset cifar10 --data " + cifar.string() +
                            " --batches 2 --valid-size 100 --split-seed 9 --train-subset 200 --grayscale --random-labels 1 "
                            "--width 16 --depth 1 --max-epoch 1 --quiet --out " + out.string());
  INFO(text);
  REQUIRE(rc == 0);
  const auto data = read_json(out / "data.json");
  CHECK(data["batches"] == nlohmann::json::array({2}));
  CHECK(data["valid_indices"].size() == 100);
  CHECK(data["split_seed"] == 9);
  CHECK(data["normalize"]["mean"].size() == 1);  // grayscale
  CHECK_THAT(data["summary"].get<std::string>(), Contains("cifar10 batches 2 grayscale") && Contains("train 200 of 9900"));
}

// The one registry column folder under a task's registry folder (its name depends on the config and data).
fs::path only_column(const fs::path& task_dir) {
  std::vector<fs::path> cols;
  for (const auto& e : fs::directory_iterator(task_dir)) cols.push_back(e.path());
  REQUIRE(cols.size() == 1);
  return cols[0];
}

TEST_CASE("e2e: reproduce ni2024-resnet puts the slides' table beside ours", "[e2e][resnet][cifar10]") {
  const fs::path cifar = nltest::data_path("cifar10");
  NL_SKIP_IF_MISSING(cifar / "data_batch_1.bin.gz");
  const fs::path out = nltest::temp_dir("e2e-resnet");
  auto [rc, text] = run_cli("reproduce ni2024-resnet --data " + cifar.string() +
                            " --norms batchnorm,lng --depth 8 --train-subset 64 --valid-size 32 --test-subset 100 --batch-size 32 "
                            "--max-epoch 1 --seeds 1 --quiet --registry " + (out / "registry").string() + " --out " + out.string());
  INFO(text);
  REQUIRE(rc == 0);
  std::ifstream f(out / "results.md");
  const std::string md((std::istreambuf_iterator<char>(f)), {});
  CHECK_THAT(md, Contains("99.66") && Contains("39.30") && Contains("LN-G > GN > LN > BN > IN") && Contains("ResNet-8"));
  // lng before batchnorm in the order; one seed a side cannot be tested
  CHECK_THAT(md, Contains("lng > batchnorm") && Contains("inconclusive") && Contains("0/1"));
  CHECK(read_json(out / "results.json")["runs"].size() == 2);
  CHECK(read_json(out / "runs" / "lng-seed1" / "data.json")["test_subset"] == 100);
  // Both runs recorded in the registry, under the task's column (the runs of `reproduce resnet-cifar`)
  const fs::path column = only_column(out / "registry" / "resnet-cifar");
  const auto rec = read_json(column / "lng" / "seed1.json");
  CHECK(rec["status"] == "done");
  CHECK(rec["test"]["test_acc"].is_number());
  CHECK(fs::exists(column / "batchnorm" / "seed1.json"));
}

TEST_CASE("e2e: reproduce ni2024-resnet records a diverged norm and reuses finished runs", "[e2e][resnet][cifar10]") {
  const fs::path cifar = nltest::data_path("cifar10");
  NL_SKIP_IF_MISSING(cifar / "data_batch_1.bin.gz");
  const fs::path out = nltest::temp_dir("e2e-resnet-resume");
  // Without a norm the ReLU-free ResNet is linear: at lr 10 it reaches a non-finite loss at update 4.
  const std::string cmd = "reproduce ni2024-resnet --data " + cifar.string() +
                          " --norms none,lng --depth 8 --train-subset 64 --valid-size 32 --test-subset 100 --batch-size 32 "
                          "--max-epoch 3 --lr 10 --clip-norm 0 --seeds 1 --quiet --registry " + (out / "registry").string() +
                          " --out " + out.string();
  auto [rc, text] = run_cli(cmd);
  INFO(text);
  REQUIRE(rc == 0);
  auto read_md = [&] {
    std::ifstream f(out / "results.md");
    return std::string((std::istreambuf_iterator<char>(f)), {});
  };
  const std::string md = read_md();
  CHECK_THAT(md, Contains("| none ") && Contains("1/1"));  // diverged in its one seed
  CHECK(read_json(only_column(out / "registry" / "resnet-cifar") / "none" / "seed1.json")["status"] == "diverged");
  CHECK_THAT(md, Contains("is not judged"));  // lng is the only norm of the slides' order here
  CHECK_THAT(md, Contains("| lng  "));
  const fs::path last = out / "runs" / "lng-seed1" / "checkpoint_last.safetensors";
  const fs::path result = out / "runs" / "lng-seed1" / "results.json";
  REQUIRE(fs::exists(last));
  const auto trained = fs::last_write_time(last), reported = fs::last_write_time(result);
  for (int call = 2; call <= 3; ++call) {
    auto [rc2, text2] = run_cli(cmd);
    INFO("call " << call << ": " << text2);
    REQUIRE(rc2 == 0);
    CHECK(fs::last_write_time(last) == trained);      // loaded, not trained again
    CHECK(fs::last_write_time(result) == reported);   // nor evaluated again (its training time stays)
    CHECK(read_md() == md);                            // same numbers, and the first run's minutes
  }
}

TEST_CASE("e2e: reproduce ni2024-capacity does not train a finished run again", "[e2e][lnnet]") {
  const fs::path mnist = nltest::data_path("mnist");
  NL_SKIP_IF_MISSING(mnist / "train-images-idx3-ubyte.gz");
  const fs::path out = nltest::temp_dir("e2e-capacity-resume");
  const std::string cmd = "reproduce ni2024-capacity --datasets mnist --data " + mnist.string() +
                          " --groups-list 1 --width 16 --depth 1 --train-subset 200 --valid-size 100 --max-epoch 2 --seeds 1 --quiet "
                          "--registry " + (out / "registry").string() + " --out " + out.string();
  auto [rc, text] = run_cli(cmd);
  INFO(text);
  REQUIRE(rc == 0);
  const fs::path last = out / "runs" / "mnist-G1-seed1" / "checkpoint_last.safetensors";
  REQUIRE(fs::exists(last));
  const auto trained = fs::last_write_time(last);
  const nlohmann::json first = read_json(out / "results.json");
  auto [rc2, text2] = run_cli(cmd);
  INFO(text2);
  REQUIRE(rc2 == 0);
  CHECK(fs::last_write_time(last) == trained);
  const nlohmann::json second = read_json(out / "results.json");
  REQUIRE(second["runs"].size() == first["runs"].size());
  for (size_t i = 0; i < first["runs"].size(); ++i) CHECK(second["runs"][i]["test"] == first["runs"][i]["test"]);
  CHECK(first["runs"][2]["test"].contains("hessian"));
}
