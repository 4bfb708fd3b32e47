// The experiment runner on the data-free toy task: every run in its own folder; a second call redoes
// nothing; a run stopped mid-way continues from its checkpoint bit-identically to an uninterrupted
// one; a raised budget trains on; divergence is recorded and not redone; a failing run is "failed"
// while the others run; --set reaches the runs whose task has the key; an unknown task, duplicate
// labels, bad overrides, unknown --set keys and missing data are clear errors.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>
#include <unistd.h>

#include "engine/experiment.h"
#include "optim/checkpoint.h"
#include "toy_task.h"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using json = nlohmann::json;
using namespace nlapp;

namespace {
fs::path tmp(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("normlab-experiment-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}

// "toy" → ToyTask; "toy-nan" → ToyTask whose 3rd loss is NaN; anything else is not registered.
std::unique_ptr<Task> toy_factory(const std::string& name) {
  if (name == "toy") return std::make_unique<nltest::ToyTask>();
  if (name == "toy-nan") {
    auto t = std::make_unique<nltest::ToyTask>();
    t->nan_at = 3;
    return t;
  }
  return nullptr;
}

ExperimentOptions options(const fs::path& out, json budget, std::ostream& log, int* updates_seen = nullptr) {
  ExperimentOptions o;
  o.out = out;
  budget["quiet"] = true;
  o.budget = budget;
  o.log = &log;
  o.make_task = toy_factory;
  if (updates_seen) o.on_update = [updates_seen](const std::vector<RunRecord>&) { ++*updates_seen; };
  return o;
}

std::vector<ExperimentRun> two_seeds() {
  return {{"a/seed1", "toy", "", {{"seed", 1}}, {{"seed", 1}}}, {"a/seed2", "toy", "", {{"seed", 2}}, {{"seed", 2}}}};
}

std::vector<double> tensor_values(const fs::path& ckpt) {
  std::vector<double> v;
  for (const auto& [k, t] : nl::load_checkpoint(ckpt).tensors)
    if (k.rfind("model.", 0) == 0)
      for (double x : t.to_vector<double>()) v.push_back(x);
  return v;
}
}  // namespace

TEST_CASE("experiment: each run gets its folder and a second call redoes nothing", "[engine][experiment]") {
  const fs::path out = tmp("skip");
  std::ostringstream log;
  int calls = 0;
  auto rec = run_experiment(two_seeds(), options(out, {{"max_epoch", 2}}, log, &calls));
  REQUIRE(rec.size() == 2);
  CHECK(calls == 3);  // once after loading, once per run
  for (const auto& r : rec) {
    CHECK(r.status == RunStatus::Done);
    CHECK_FALSE(r.reused);
    CHECK(fs::exists(r.folder / "results.json"));
    CHECK(r.result["updates"] == 16);
    CHECK(std::isfinite(r.test_metric("mse")));
  }
  CHECK(rec[0].folder == out / "runs" / "a" / "seed1");
  CHECK(rec[0].test_metric("mse") != rec[1].test_metric("mse"));  // different seeds, different runs
  CHECK_THAT(log.str(), Contains("[run 2 of 2] a/seed2") && Contains("eta"));

  const auto stamp = fs::last_write_time(rec[0].folder / "checkpoint_last.safetensors");
  std::ostringstream log2;
  auto again = run_experiment(two_seeds(), options(out, {{"max_epoch", 2}}, log2));
  for (size_t i = 0; i < 2; ++i) {
    CHECK(again[i].reused);
    CHECK(again[i].status == RunStatus::Done);
    CHECK(again[i].test_metric("mse") == rec[i].test_metric("mse"));
  }
  CHECK(fs::last_write_time(rec[0].folder / "checkpoint_last.safetensors") == stamp);
  CHECK_THAT(log2.str(), Contains("2 already finished") && !Contains("[run"));
  fs::remove_all(out);
}

TEST_CASE("experiment: a run stopped mid-way resumes from its checkpoint bit-identically", "[engine][experiment]") {
  const fs::path out = tmp("resume"), straight = tmp("straight");
  std::ostringstream log;
  std::vector<ExperimentRun> one{{"r", "toy", "", {{"seed", 3}}, json::object()}};
  run_experiment(one, options(out, {{"max_update", 5}}, log));
  // As if killed after the checkpoint: no results.json, checkpoint_last at update 5.
  fs::remove(out / "runs" / "r" / "results.json");
  auto rec = run_experiment(one, options(out, {{"max_update", 13}}, log));
  REQUIRE(rec[0].status == RunStatus::Done);
  CHECK_FALSE(rec[0].reused);
  CHECK(rec[0].result["updates"] == 13);
  auto ref = run_experiment(one, options(straight, {{"max_update", 13}}, log));
  CHECK(tensor_values(out / "runs/r/checkpoint_last.safetensors") == tensor_values(straight / "runs/r/checkpoint_last.safetensors"));
  CHECK(rec[0].test_metric("mse") == ref[0].test_metric("mse"));

  // A raised budget trains on from the finished run (not from scratch) and is then reused.
  auto more = run_experiment(one, options(out, {{"max_update", 20}}, log));
  CHECK_FALSE(more[0].reused);
  CHECK(more[0].result["updates"] == 20);
  auto ref20 = run_experiment(one, options(straight, {{"max_update", 20}}, log));
  CHECK(tensor_values(out / "runs/r/checkpoint_last.safetensors") == tensor_values(straight / "runs/r/checkpoint_last.safetensors"));
  CHECK(run_experiment(one, options(out, {{"max_update", 20}}, log))[0].reused);
  fs::remove_all(out);
  fs::remove_all(straight);
}

TEST_CASE("experiment: divergence is recorded and not redone, an unknown task is an error", "[engine][experiment]") {
  const fs::path out = tmp("status");
  std::ostringstream log;
  // A run naming a task this binary lacks stops the experiment before any run starts.
  CHECK_THROWS_WITH(run_experiment({{"lm", "lm-not-here", "", {{"norm", "layernorm"}}, json::object()}},
                                   options(out, {{"max_epoch", 1}}, log)),
                    Contains("unknown task 'lm-not-here'") && Contains("normlab train --help"));
  std::vector<ExperimentRun> runs{{"nan", "toy-nan", "", json::object(), json::object()},
                                  {"ok", "toy", "", json::object(), json::object()},
                                  {"bad", "toy", "", {{"lr_scheduler", "linear"}}, json::object()}};
  auto rec = run_experiment(runs, options(out, {{"max_epoch", 1}}, log));
  CHECK(rec[0].status == RunStatus::Diverged);
  CHECK_THAT(rec[0].message, Contains("update 3"));
  CHECK(rec[1].status == RunStatus::Done);
  CHECK(std::isnan(rec[0].test_metric("mse")));
  // A run its Trainer rejects fails alone, named with the error; it is retried next time.
  CHECK(rec[2].status == RunStatus::Failed);
  CHECK_THAT(failed_runs_error(rec), Contains("1 run(s) failed") && Contains("bad: --lr-scheduler linear decays to --max-update"));
  CHECK(failed_runs_error({rec[1]}).empty());
  auto again = run_experiment(runs, options(out, {{"max_epoch", 1}}, log));
  CHECK(again[0].reused);
  CHECK(again[0].status == RunStatus::Diverged);
  CHECK(again[1].reused);
  CHECK_FALSE(again[2].reused);
  CHECK(again[2].status == RunStatus::Failed);
  fs::remove_all(out);
}

TEST_CASE("experiment: bad run lists and missing data are clear errors before any training", "[engine][experiment]") {
  const fs::path out = tmp("errors");
  std::ostringstream log;
  std::vector<ExperimentRun> dup{{"x", "toy", "", json::object(), json::object()}, {"x", "toy", "", json::object(), json::object()}};
  CHECK_THROWS_WITH(run_experiment(dup, options(out, json::object(), log)), Contains("'x' is used twice"));
  std::vector<ExperimentRun> bad{{"y", "toy", "", {{"max_updat", 3}}, json::object()}};
  CHECK_THROWS_WITH(run_experiment(bad, options(out, json::object(), log)),
                    Contains("run 'y'") && Contains("unknown setting 'max_updat'") && Contains("max_update"));
  // --set: applied where the task has the key, an error where no task has it.
  ExperimentOptions o_set = options(out, {{"max_update", 2}}, log);
  o_set.set = {{"lr", "0.5"}};
  nltest::ToyTask toy;
  const json s = experiment_settings(toy, {"z", "toy", "", {{"lr", 0.1}}, json::object()}, o_set);
  CHECK(s["lr"] == 0.5);
  CHECK(s["max_update"] == 2);
  CHECK(s["resume"] == true);
  CHECK(s["out"] == (out / "runs" / "z").string());
  o_set.set = {{"beam", "1"}};
  CHECK_THROWS_WITH(run_experiment({{"z", "toy", "", json::object(), json::object()}}, o_set),
                    Contains("--set beam=1") && Contains("no task of this experiment"));
  // What the experiment sets per run (a run override, the seed, the folder) is not for --set: it would make
  // every run the same one (--set norm=layernorm made every variant of reproduce xu2019 a LayerNorm).
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{{"lr", "0.5"}, {"seed", "5"}, {"out", "/x"}}) {
    o_set.set = {{k, v}};
    CHECK_THROWS_WITH(run_experiment({{"z", "toy", "", {{"lr", 0.1}}, json::object()}}, o_set),
                      Contains("--set " + k + "=" + v) && Contains("set by the experiment"));
  }
  // A registered task whose data is missing: the error names the run and the task's own fix.
  ExperimentOptions o;
  o.out = out;
  o.log = &log;
  std::vector<ExperimentRun> nodata{{"m", "mnist", "", {{"data", "/nonexistent/mnist-folder"}, {"max_update", 1}}, json::object()}};
  try {
    run_experiment(nodata, o);
    FAIL("no error for a missing data set");
  } catch (const std::runtime_error& e) {
    CHECK_THAT(std::string(e.what()), Contains("experiment run 'm' (task mnist)") && Contains("/nonexistent/mnist-folder"));
  }
  CHECK_FALSE(fs::exists(out / "runs" / "m" / "metrics.jsonl"));
  fs::remove_all(out);
}
