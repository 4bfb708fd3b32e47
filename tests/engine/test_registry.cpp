// The results registry (engine/registry.h) and the experiment runner's use of it, on the toy task: a
// finished run is recorded as <group>/<column>/<variant>/seed<N>.json; a run whose record has the same
// settings is not trained again (even with its run folder gone, as in a fresh clone); a record of other
// settings is kept, never overwritten; a look-up-only (dry) experiment trains nothing and marks the rest
// "not run"; a damaged record is a clear error; records carry commit, CPU and wall times; a NaN in a
// parameter found at validation makes the run diverged and is recorded so.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "engine/experiment.h"
#include "engine/registry.h"
#include "engine/task_cli.h"
#include "engine/task_registry.h"
#include "engine/task_reproduction.h"
#include "engine/trainer.h"
#include "bf16_test_util.h"
#include "data_text/temp_dir.h"
#include "toy_task.h"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using json = nlohmann::json;
using namespace nlapp;

namespace {

ExperimentOptions options(const fs::path& dir, std::ostream& log) {
  ExperimentOptions o;
  o.out = dir / "work";
  o.registry = dir / "registry";
  o.budget = {{"quiet", true}, {"max_epoch", 1}};
  o.log = &log;
  o.make_task = [](const std::string& n) -> std::unique_ptr<Task> {
    if (n == "toy") return std::make_unique<nltest::ToyTask>();
    return nullptr;
  };
  return o;
}

std::vector<ExperimentRun> runs(double lr = 0.05) {
  std::vector<ExperimentRun> v;
  for (int seed = 1; seed <= 2; ++seed)
    v.push_back({"toy/seed" + std::to_string(seed), "toy", "", {{"seed", seed}, {"lr", lr}}, {{"seed", seed}},
                 RegistryKey{"paper", "col", "plain", seed}});
  return v;
}
}  // namespace

TEST_CASE("registry: key paths and bad key parts", "[engine][registry]") {
  CHECK(RegistryKey{"xu2019", "mt", "layernorm", 3}.relative_path() == "xu2019/mt/layernorm/seed3.json");
  CHECK_THROWS_WITH((RegistryKey{"xu2019", "a/b", "layernorm", 1}.relative_path()), Contains("without '/'"));
  CHECK_THROWS_WITH((RegistryKey{"", "mt", "layernorm", 1}.relative_path()), Contains("non-empty"));
  CHECK_THROWS_WITH((RegistryKey{"x", "mt", "..", 1}.relative_path()), Contains("without"));
  CHECK_THROWS_WITH((RegistryKey{"x", "mt", "ln", 0}.relative_path()), Contains("seed must be >= 1"));
}

TEST_CASE("registry: finished runs are recorded and reused without their run folders", "[engine][registry]") {
  const nltest::TempDir td("registry-reuse");
  const fs::path& dir = td.path;
  std::ostringstream log;
  auto first = run_experiment(runs(), options(dir, log));
  REQUIRE(first[0].status == RunStatus::Done);
  const fs::path rec1 = dir / "registry" / "paper" / "col" / "plain" / "seed1.json";
  REQUIRE(fs::exists(rec1));
  const json r = read_registry_record(dir / "registry", RegistryKey{"paper", "col", "plain", 1});
  CHECK(r["status"] == "done");
  CHECK(r["registry"]["variant"] == "plain");
  CHECK(r["settings"]["seed"] == 1);
  CHECK(r["test"]["mse"] == first[0].result["test"]["mse"]);
  CHECK(r["environment"]["commit"].get<std::string>().size() >= 7);
  CHECK_FALSE(r["environment"]["cpu"]["model"].get<std::string>().empty());
  CHECK(r["environment"]["cpu"]["cores"].get<int>() >= 1);
  if (std::ifstream("/proc/cpuinfo").good() && r["environment"]["cpu"].contains("family"))  // x86 Linux
    CHECK(r["environment"]["cpu"]["model_number"].get<int>() >= 0);
  REQUIRE(r["environment"]["load_average"].size() == 3);  // what else ran beside it
  CHECK(r["environment"]["load_average"][0].get<double>() >= 0);
  CHECK(r["precision"] == "float32");
  CHECK(r["train_seconds"].get<double>() > 0);
  CHECK(r.contains("test_seconds"));

  // A fresh clone: the run folders are gone, the registry is there. Nothing trains.
  fs::remove_all(dir / "work");
  std::ostringstream log2;
  auto again = run_experiment(runs(), options(dir, log2));
  for (const auto& x : again) {
    CHECK(x.status == RunStatus::Done);
    CHECK(x.from_registry);
  }
  CHECK(again[1].test_metric("mse") == first[1].test_metric("mse"));
  CHECK_FALSE(fs::exists(dir / "work" / "runs" / "toy" / "seed1"));
  CHECK_THAT(log2.str(), Contains("2 already finished"));
}

TEST_CASE("registry: a record of other settings is kept, and the new run is not recorded over it", "[engine][registry]") {
  const nltest::TempDir td("registry-conflict");
  const fs::path& dir = td.path;
  std::ostringstream log;
  run_experiment(runs(0.05), options(dir, log));
  const fs::path rec1 = dir / "registry" / "paper" / "col" / "plain" / "seed1.json";
  std::ifstream in(rec1);
  const std::string before((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ostringstream log2;
  ExperimentOptions o2 = options(dir, log2);
  o2.out = dir / "work-other";  // (the first run's checkpoints in its own folder would refuse a resume with another lr)
  auto other = run_experiment(runs(0.01), o2);  // another lr: another experiment
  CHECK(other[0].status == RunStatus::Done);
  CHECK_FALSE(other[0].from_registry);
  CHECK_THAT(log2.str(), Contains("holds a run with other settings") && Contains("not recorded there"));
  std::ifstream in2(rec1);
  const std::string after((std::istreambuf_iterator<char>(in2)), std::istreambuf_iterator<char>());
  CHECK(after == before);
}

TEST_CASE("registry: a dry experiment trains nothing and marks missing runs not run", "[engine][registry]") {
  const nltest::TempDir td("registry-dry");
  const fs::path& dir = td.path;
  std::ostringstream log;
  ExperimentOptions o = options(dir, log);
  auto one = runs();
  one.resize(1);
  run_experiment(one, o);  // seed 1 recorded
  o.dry = true;
  auto rec = run_experiment(runs(), o);
  CHECK(rec[0].status == RunStatus::Done);
  CHECK(rec[1].status == RunStatus::NotRun);
  CHECK(status_name(RunStatus::NotRun) == "not run");
  CHECK_FALSE(fs::exists(dir / "registry" / "paper" / "col" / "plain" / "seed2.json"));
}

TEST_CASE("registry: a column is continued in the precision of its finished runs (keep_column_precision)",
          "[engine][registry][bf16]") {
  NL_SKIP_WITHOUT_ONEDNN();
  const nltest::TempDir td("registry-precision");
  const fs::path& dir = td.path;
  // column "half": both seeds finished in bfloat16; column "full": seed 1 finished in float32
  auto column = [](const std::string& col, int seeds) {
    std::vector<ExperimentRun> v;
    for (int seed = 1; seed <= seeds; ++seed)
      v.push_back({col + "/seed" + std::to_string(seed), "toy", "", {{"seed", seed}}, {{"column", col}, {"seed", seed}},
                   RegistryKey{"paper", col, "plain", seed}});
    return v;
  };
  std::ostringstream log;
  std::vector<ExperimentRun> half = column("half", 2);
  for (auto& r : half) r.overrides["bf16"] = true;
  run_experiment(half, options(dir, log));
  run_experiment(column("full", 1), options(dir, log));

  std::vector<ExperimentRun> all = column("half", 2), full = column("full", 2);
  all.insert(all.end(), full.begin(), full.end());
  keep_column_precision(all, options(dir, log));
  CHECK(all[0].overrides.value("bf16", false));
  CHECK(all[1].overrides.value("bf16", false));
  CHECK_FALSE(all[2].overrides.contains("bf16"));
  CHECK_FALSE(all[3].overrides.contains("bf16"));
  ExperimentOptions dry = options(dir, log);
  dry.dry = true;
  const auto rec = run_experiment(all, dry);  // both bfloat16 runs and the float32 one are found
  CHECK(rec[0].status == RunStatus::Done);
  CHECK(rec[1].status == RunStatus::Done);
  CHECK(rec[2].status == RunStatus::Done);
  CHECK(rec[3].status == RunStatus::NotRun);
  CHECK(rec[0].result["precision"] == "bfloat16");
  CHECK(rec[2].result["precision"] == "float32");
}

TEST_CASE("registry: a damaged record is an error naming the file and the fix", "[engine][registry]") {
  const nltest::TempDir td("registry-damaged");
  const fs::path& dir = td.path;
  fs::create_directories(dir / "registry" / "paper" / "col" / "plain");
  std::ofstream(dir / "registry" / "paper" / "col" / "plain" / "seed1.json") << "{\"truncated\": ";
  std::ostringstream log;
  CHECK_THROWS_WITH(run_experiment(runs(), options(dir, log)), Contains("seed1.json") && Contains("damaged") && Contains("git checkout"));
  CHECK_THROWS_WITH(read_registry_record(dir / "registry", RegistryKey{"paper", "col", "plain", 1}), Contains("damaged"));
}

TEST_CASE("registry: a finished record whose metrics are not numbers is damaged", "[engine][registry]") {
  const nltest::TempDir td("registry-bad-metric");
  const fs::path root = td.path / "registry";
  const RegistryKey key{"paper", "col", "plain", 1};
  const json good = {{"settings", {{"seed", 1}}}, {"status", "done"}, {"test", {{"mse", 0.5}}}, {"best_valid", 0.4}};
  write_registry_record(root, key, good);
  CHECK(read_registry_record(root, key)["test"]["mse"] == 0.5);
  // Before: a null, a string or a missing test printed as "nan ± nan" in the generated tables, exit 0.
  for (const json& bad : {json(nullptr), json("abc")}) {
    json r = good;
    r["test"]["mse"] = bad;
    write_registry_record(root, key, r);
    CHECK_THROWS_WITH(read_registry_record(root, key), Contains("seed1.json") && Contains("damaged") && Contains("\"mse\""));
  }
  json r = good;
  r["best_valid"] = "x";
  write_registry_record(root, key, r);
  CHECK_THROWS_WITH(read_registry_record(root, key), Contains("best_valid"));
  r = good;
  r.erase("test");
  write_registry_record(root, key, r);
  CHECK_THROWS_WITH(read_registry_record(root, key), Contains("\"test\""));
  r = good;  // a diverged run has no metrics to check
  r["status"] = "diverged";
  r["test"] = nullptr;
  write_registry_record(root, key, r);
  CHECK_NOTHROW(read_registry_record(root, key));
}

TEST_CASE("registry: a record without a newer setting matches when that setting is at its default", "[engine][registry]") {
  const json defaults = {{"conv_relu", true}, {"lr", 0.1}};
  const json old = {{"lr", 0.05}, {"seed", 1}, {"out", "a"}};
  json now = {{"lr", 0.05}, {"seed", 1}, {"conv_relu", true}, {"out", "b"}};
  CHECK(same_experiment(old, now, defaults));
  now["conv_relu"] = false;
  CHECK_FALSE(same_experiment(old, now, defaults));
  CHECK_FALSE(same_experiment(old, now));
}

TEST_CASE("registry: a record made from a copy of the corpus elsewhere is the same experiment", "[engine][registry]") {
  const json gpu = {{"data", ".gpu-carry/data-bin/multi30k"}, {"seed", 1}};
  CHECK(same_experiment(gpu, {{"data", "data-bin/multi30k"}, {"seed", 1}}));
  CHECK(same_experiment(gpu, {{"data", "/home/me/multi30k/"}, {"seed", 1}}));
  CHECK_FALSE(same_experiment(gpu, {{"data", "data-bin/iwslt14"}, {"seed", 1}}));
  CHECK_FALSE(same_experiment(gpu, {{"data", "data-bin/multi30k"}, {"seed", 2}}));
}

TEST_CASE("trainer: a NaN parameter found at validation makes the run diverged, recorded in results.json", "[engine][registry]") {
  // The toy loss stays finite while a parameter no batch reaches is NaN: only the validation check sees it.
  struct NanParamTask : nltest::ToyTask {
    std::shared_ptr<nl::Module> build_model(const nlohmann::json& s) override {
      struct M : nl::Module {
        std::shared_ptr<nl::Linear> lin;
        nl::Variable unused;
        M() : nl::Module("M") {
          lin = register_module("lin", std::make_shared<nl::Linear>(4, 1));
          unused = register_parameter("unused", nl::Tensor::full({2}, std::numeric_limits<double>::quiet_NaN()));
        }
        nl::Variable forward(const nl::Variable& x) override { return (*lin)(x); }
      };
      return std::make_shared<M>();
    }
  };
  const nltest::TempDir td("registry-nanparam");
  const fs::path& dir = td.path;
  NanParamTask task;
  json s = task_schema(task).defaults();
  s["out"] = (dir / "run").string();
  s["quiet"] = true;
  s["seed"] = 1;
  s["max_epoch"] = 1;
  task.setup(s);
  Trainer t(task, s);
  CHECK_THROWS_AS(t.run(), TrainingDiverged);
  std::ifstream in(dir / "run" / "results.json");
  const json r = json::parse(in);
  CHECK(r["diverged"] == true);
  CHECK_THAT(r["error"].get<std::string>(), Contains("parameter 'unused'"));
}

TEST_CASE("registry: a task reproduction with --bf16 has its own column beside the float32 one", "[registry][bf16]") {
  nlapp::TaskInvocation inv;
  inv.task = nlapp::make_task("mnist");
  inv.settings = nlapp::resolve_task_settings(*inv.task, "one-epoch", {}, &inv.config_source);
  CHECK(nlapp::registry_column(inv) == "one-epoch");
  inv.settings = nlapp::resolve_task_settings(*inv.task, "one-epoch", {{"bf16", "true"}}, &inv.config_source);
  CHECK(nlapp::registry_column(inv) == "one-epoch+bf16");
  CHECK(nlapp::precision_name(inv.settings) == "bfloat16");
}

TEST_CASE("registry: recorded_seeds is the highest seed on record, at least the minimum", "[engine][registry]") {
  const nltest::TempDir td("registry-seeds");
  const fs::path root = td.path / "registry";
  CHECK(recorded_seeds(root, "paper", 3) == 3);  // no folder
  const json rec = {{"settings", {{"seed", 1}}}, {"status", "done"}, {"test", {{"acc", 0.5}}}};
  write_registry_record(root, RegistryKey{"paper", "col", "plain", 2}, rec);
  CHECK(recorded_seeds(root, "paper", 3) == 3);
  write_registry_record(root, RegistryKey{"paper", "col2", "other", 5}, rec);
  std::ofstream(root / "paper" / "col" / "plain" / "seedx.json") << "{}";     // not a seed file
  std::ofstream(root / "paper" / "col" / "plain" / "seed12.json.tmp") << "{}";  // a temporary file
  std::ofstream(root / "paper" / "col" / "plain" / "seed999.json") << "{}";     // beyond --seeds' range
  CHECK(recorded_seeds(root, "paper", 3) == 5);
  CHECK(recorded_seeds(root, "other", 1) == 1);
}
