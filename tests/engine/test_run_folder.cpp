// A run's --out folder (issue 29, items 2, 3, 9 and 10): a second writer is refused with the holder's pid,
// a new run never replaces another run's records without --overwrite, a resume never replaces sound results
// with NaN or empty ones, output options may change on resume, stale checkpoint temporaries are removed at
// start, and long evaluation passes print a heartbeat.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "engine/eval_heartbeat.h"
#include "engine/run_folder.h"
#include "engine/trainer.h"
#include "optim/checkpoint.h"
#include "toy_task.h"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using json = nlohmann::json;
using namespace nlapp;

namespace {
fs::path tmp(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("normlab-runfolder-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}

RunResult train(json over) {
  nltest::ToyTask t;
  json s = task_schema(t).defaults();
  s["quiet"] = true;
  for (auto& [k, v] : over.items()) s[k] = v;
  t.setup(s);
  return Trainer(t, s).run();
}

json read_json(const fs::path& p) {
  std::ifstream f(p);
  return json::parse(f);
}
}  // namespace

TEST_CASE("run folder: a second writer is refused, naming the holder's pid", "[engine][run-folder]") {
  const fs::path out = tmp("lock");
  {
    RunFolderLock held(out);  // another run writing there (flock is per open file: this process counts too)
    CHECK_THROWS_WITH(train({{"out", out.string()}, {"max_update", 2}}),
                      Contains("is in use by another normlab run (pid " + std::to_string(::getpid()) + ")"));
    CHECK_FALSE(fs::exists(out / "metrics.jsonl"));
  }
  // Released with its holder (a killed process releases it too): the folder can be used again.
  CHECK(train({{"out", out.string()}, {"max_update", 2}}).updates == 2);
  fs::remove_all(out);
}

TEST_CASE("run folder: a new run never replaces another run's records without --overwrite", "[engine][run-folder]") {
  const fs::path out = tmp("claim");
  train({{"out", out.string()}, {"max_epoch", 1}, {"seed", 1}});
  const std::string before = read_json(out / "results.json").dump();
  CHECK_THROWS_WITH(train({{"out", out.string()}, {"max_epoch", 2}, {"seed", 2}}),
                    Contains("already holds a run") && Contains("results.json") && Contains("--resume") &&
                        Contains("--overwrite") && Contains("another --out"));
  CHECK(read_json(out / "results.json").dump() == before);  // untouched
  CHECK(fs::exists(out / "checkpoint1.safetensors"));
  // --overwrite replaces the old run's records, so none of them mixes with the new run's.
  RunResult r = train({{"out", out.string()}, {"max_epoch", 2}, {"seed", 2}, {"overwrite", true}, {"save_interval", 0}});
  CHECK(r.updates == 16);
  CHECK_FALSE(fs::exists(out / "checkpoint1.safetensors"));
  CHECK(read_json(out / "results.json")["settings"]["seed"] == 2);
  fs::remove_all(out);
}

TEST_CASE("run folder: resuming a finished run whose checkpoint_best is unreadable keeps its sound results",
          "[engine][run-folder][resume]") {
  const fs::path out = tmp("sound");
  const RunResult first = train({{"out", out.string()}, {"max_update", 5}});
  REQUIRE(first.test.count("mse"));
  const json before = read_json(out / "results.json");
  REQUIRE(before["test"].contains("mse"));
  std::ofstream(out / "checkpoint_best.safetensors", std::ios::trunc) << "garbage";
  // Before: "test": {} and best_valid NaN replaced the results, exit 0.
  const RunResult again = train({{"out", out.string()}, {"max_update", 5}, {"resume", true}});
  CHECK(again.updates == 5);
  REQUIRE(again.test.count("mse"));
  CHECK(again.test.at("mse") == before["test"]["mse"].get<double>());
  CHECK(again.best_valid == before["best_valid"].get<double>());
  const json after = read_json(out / "results.json");
  CHECK(after["test"] == before["test"]);
  CHECK(after["best_valid"] == before["best_valid"]);
  fs::remove_all(out);
}

TEST_CASE("run folder: output options may change on resume, as docs/checkpoint-format.md says", "[engine][run-folder][resume]") {
  const fs::path out = tmp("outopts");
  train({{"out", out.string()}, {"max_update", 6}});
  RunResult r = train({{"out", out.string()}, {"max_update", 10}, {"resume", true}, {"log_interval", 1},
                       {"validate_interval_updates", 2}, {"save_interval", 0}, {"save_interval_updates", 5},
                       {"validate_interval", 0}});
  CHECK(r.updates == 10);
  CHECK(fs::exists(out / "checkpoint_2_10.safetensors"));
  fs::remove_all(out);
}

TEST_CASE("run folder: temporaries of an interrupted checkpoint write are removed at start", "[engine][run-folder]") {
  const fs::path out = tmp("stale");
  train({{"out", out.string()}, {"max_update", 3}});
  // What a kill -9 during save_checkpoint leaves (89 MB for mt), and an unrelated hidden file.
  std::ofstream(out / ".checkpoint_last.safetensors.tmp.AbC123") << "partial";
  std::ofstream(out / ".checkpoint_2_10.safetensors.tmp.xyz789") << "partial";
  std::ofstream(out / ".keep-me") << "x";
  CHECK(remove_stale_checkpoint_temps(out) == 2);
  std::ofstream(out / ".checkpoint_last.safetensors.tmp.QqQqQq") << "partial";
  train({{"out", out.string()}, {"max_update", 5}, {"resume", true}});
  CHECK_FALSE(fs::exists(out / ".checkpoint_last.safetensors.tmp.QqQqQq"));
  CHECK(fs::exists(out / ".keep-me"));
  fs::remove_all(out);
}

TEST_CASE("eval heartbeat: a long evaluation pass prints its elapsed time, a short one nothing", "[engine][run-folder]") {
  set_eval_heartbeat_seconds(0.2);
  std::vector<std::string> lines;
  std::mutex m;
  auto print = [&](const std::string& t) {
    std::lock_guard<std::mutex> g(m);
    lines.push_back(t);
  };
  { EvalHeartbeat quick("validation at epoch 1.00", print); }
  CHECK(lines.empty());
  {
    EvalHeartbeat slow("test pass", print);
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
  }
  set_eval_heartbeat_seconds(10);
  std::lock_guard<std::mutex> g(m);
  REQUIRE(lines.size() >= 2);
  CHECK(lines.size() <= 4);
  CHECK_THAT(lines[0], Contains("  test pass: ") && Contains(" s so far"));
}
