// The one Trainer on a data-free task: learning, update_freq, validation cadence, interval
// checkpoints and keep-last, bit-identical resume from any checkpoint, refusing a resume with other
// settings (naming them), finished runs not growing on resume, a corrupt checkpoint_best not
// blocking a resume, NaN losses stopping with the update named, and --detect-anomaly naming the op.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <thread>
#include <unistd.h>

#include "autograd/anomaly.h"
#include "engine/eval_heartbeat.h"
#include "engine/run_folder.h"
#include "engine/trainer.h"
#include "nn/sequential.h"
#include "optim/checkpoint.h"
#include "report/metrics_log.h"
#include "toy_task.h"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using json = nlohmann::json;
using namespace nlapp;

namespace {
fs::path tmp(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("normlab-trainer-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}

json settings_for(nltest::ToyTask& t, json over) {
  json s = task_schema(t).defaults();
  s["quiet"] = true;
  for (auto& [k, v] : over.items()) s[k] = v;
  t.setup(s);
  return s;
}

RunResult train(json over) {
  nltest::ToyTask t;
  json s = settings_for(t, std::move(over));
  return Trainer(t, s).run();
}

nl::TensorMap tensors(const fs::path& p) { return nl::load_checkpoint(p).tensors; }

json read_json_file_at(const fs::path& p) {
  std::ifstream f(p);
  return json::parse(f);
}

void require_equal_maps(const nl::TensorMap& a, const nl::TensorMap& b) {
  REQUIRE(a.size() == b.size());
  for (const auto& [k, v] : a) {
    INFO(k);
    REQUIRE(b.count(k));
    REQUIRE(v.to_vector<double>() == b.at(k).to_vector<double>());
  }
}
}  // namespace

TEST_CASE("trainer: a regression task learns and writes its files", "[engine]") {
  fs::path out = tmp("learn");
  RunResult r = train({{"out", out.string()}, {"max_epoch", 5}});
  CHECK(r.updates == 40);
  REQUIRE(r.valid_curve.size() == 5);  // validate_interval 1: once per epoch
  CHECK(r.valid_curve.back().second < 0.5 * r.valid_curve.front().second);
  CHECK(r.test.at("mse") == Approx(r.best_valid));
  for (const char* f : {"config.json", "metrics.jsonl", "results.json", "checkpoint_last.safetensors",
                        "checkpoint_best.safetensors"})
    CHECK(fs::exists(out / f));
  auto lines = read_metrics_log(out / "metrics.jsonl");
  CHECK(lines.size() == 20 + 5);  // a loss line every 2 updates + 5 validations
  fs::remove_all(out);
}

TEST_CASE("trainer: the model it trains holds the weights build_model draws for the seed", "[engine]") {
  // The trainer first builds the model without drawing (size_model_before_drawing); the model it keeps must
  // still be the seed's first draws.
  nltest::ToyTask t;
  json s = settings_for(t, {{"seed", 11}});
  Trainer tr(t, s);
  nl::manual_seed(11);
  auto direct = t.build_model(s);
  const auto a = tr.model().parameters(), b = direct->parameters();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const auto va = a[i].data().to_vector<float>(), vb = b[i].data().to_vector<float>();
    CHECK(va == vb);
  }
}

namespace {
// The toy task with a second layer far too big for any machine's memory (2^20 x 2^20 floats, 4 TiB).
struct HugeToyTask : nltest::ToyTask {
  std::shared_ptr<nl::Module> build_model(const json&) override {
    auto m = std::make_shared<nl::Sequential>();
    m->push_back(std::make_shared<nl::Linear>(4, 64));  // built (and drawn) first: it fits
    m->push_back(std::make_shared<nl::Linear>(int64_t(1) << 20, int64_t(1) << 20));
    return m;
  }
};
}  // namespace

TEST_CASE("trainer: a model too big for memory is refused before any weight is drawn", "[engine]") {
  HugeToyTask t;
  json s = settings_for(t, {{"seed", 4}, {"out", tmp("huge").string()}});
  nl::manual_seed(99);
  const auto before_seed = std::pair<uint64_t, uint64_t>{4, 0};
  CHECK_THROWS_WITH(Trainer(t, s), Contains("out of memory on cpu") && Contains("make the model or the batch smaller"));
  // The trainer seeded the generator (seed 4, offset 0) and then drew nothing: the first layer's weights,
  // which fit, were not drawn before the second layer was refused.
  CHECK(nl::rng_state() == before_seed);
  CHECK_FALSE(fs::exists(tmp("huge")));
}

TEST_CASE("trainer: update_freq k takes k batches per update", "[engine]") {
  fs::path out = tmp("ufreq");
  RunResult r = train({{"out", out.string()}, {"max_epoch", 2}, {"update_freq", 3}});
  CHECK(r.updates == 2 * 3);  // 8 batches per epoch in groups of 3, 3, 2
  fs::remove_all(out);
}

TEST_CASE("trainer: interval checkpoints and --keep-last", "[engine]") {
  fs::path out = tmp("keep");
  train({{"out", out.string()}, {"max_epoch", 2}, {"save_interval_updates", 3}, {"keep_last", 2}});
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(out)) names.push_back(e.path().filename().string());
  CHECK(std::count(names.begin(), names.end(), "checkpoint_2_15.safetensors") == 1);
  CHECK(std::count(names.begin(), names.end(), "checkpoint_2_12.safetensors") == 1);
  CHECK(std::count(names.begin(), names.end(), "checkpoint_2_9.safetensors") == 0);
  CHECK(std::count(names.begin(), names.end(), "checkpoint_1_3.safetensors") == 0);
  fs::remove_all(out);
}

TEST_CASE("trainer: epoch checkpoints and --keep-last-epochs", "[engine]") {
  fs::path out = tmp("epochs");
  train({{"out", out.string()}, {"max_epoch", 4}, {"save_interval", 1}, {"keep_last_epochs", 2}});
  CHECK_FALSE(fs::exists(out / "checkpoint1.safetensors"));
  CHECK_FALSE(fs::exists(out / "checkpoint2.safetensors"));
  REQUIRE(fs::exists(out / "checkpoint3.safetensors"));
  REQUIRE(fs::exists(out / "checkpoint4.safetensors"));
  // Model-only, named after the finished epoch, holding that epoch's final weights.
  nl::Checkpoint c = nl::load_checkpoint(out / "checkpoint4.safetensors");
  CHECK(c.meta.at("epoch") == 4);
  CHECK(c.meta.at("update") == 32);
  for (const auto& [k, v] : c.tensors) CHECK(k.rfind("model.", 0) == 0);
  auto last = tensors(out / "checkpoint_last.safetensors");
  for (const auto& [k, v] : c.tensors) CHECK(nl::sum(nl::abs(nl::sub(v, last.at(k)))).item() == 0.0);
  fs::remove_all(out);
  train({{"out", out.string()}, {"max_epoch", 2}, {"save_interval", 0}});
  CHECK_FALSE(fs::exists(out / "checkpoint1.safetensors"));
  fs::remove_all(out);
}

TEST_CASE("trainer: a run killed after any update resumes bit-identical", "[engine][resume]") {
  fs::path full = tmp("full"), part = tmp("part");
  train({{"out", full.string()}, {"max_epoch", 3}, {"save_interval_updates", 1}});
  // What a SIGKILL after update 11 (mid-epoch 2) leaves: the folder as it was, with checkpoint_last
  // at update 11 and metrics.jsonl possibly longer than that checkpoint knows of.
  fs::copy(full, part, fs::copy_options::recursive);
  fs::copy_file(full / "checkpoint_2_11.safetensors", part / "checkpoint_last.safetensors",
                fs::copy_options::overwrite_existing);
  fs::remove(part / "results.json");
  RunResult r = train({{"out", part.string()}, {"max_epoch", 3}, {"save_interval_updates", 1}, {"resume", true}});
  CHECK(r.updates == 24);
  require_equal_maps(tensors(full / "checkpoint_last.safetensors"), tensors(part / "checkpoint_last.safetensors"));
  auto a = read_metrics_log(full / "metrics.jsonl"), b = read_metrics_log(part / "metrics.jsonl");
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == b[i]);
  fs::remove_all(full);
  fs::remove_all(part);
}

TEST_CASE("trainer: a run stopped by --max-update and resumed with a higher one ends where an uninterrupted run does", "[engine][resume]") {
  fs::path full = tmp("full2"), part = tmp("part2");
  train({{"out", full.string()}, {"max_epoch", 3}});
  train({{"out", part.string()}, {"max_epoch", 3}, {"max_update", 11}});
  RunResult r = train({{"out", part.string()}, {"max_epoch", 3}, {"resume", true}});
  CHECK(r.updates == 24);
  require_equal_maps(tensors(full / "checkpoint_last.safetensors"), tensors(part / "checkpoint_last.safetensors"));
  fs::remove_all(full);
  fs::remove_all(part);
}

TEST_CASE("trainer: resume with other settings is refused, naming each", "[engine][resume]") {
  fs::path out = tmp("diff");
  train({{"out", out.string()}, {"max_update", 4}});
  nltest::ToyTask t;
  json s = settings_for(t, {{"out", out.string()}, {"max_update", 8}, {"resume", true}, {"lr", 0.01}, {"seed", 5}});
  CHECK_THROWS_WITH(Trainer(t, s).run(), Contains("different settings") && Contains("--lr") && Contains("--seed") &&
                                              Contains("another --out") && !Contains("--max-update"));
  fs::remove_all(out);
}

TEST_CASE("trainer: resuming a finished run adds no update, raised limits continue it", "[engine][resume]") {
  fs::path out = tmp("finished");
  train({{"out", out.string()}, {"max_update", 5}});
  RunResult again = train({{"out", out.string()}, {"max_update", 5}, {"resume", true}});
  CHECK(again.updates == 5);
  RunResult more = train({{"out", out.string()}, {"max_update", 7}, {"resume", true}});
  CHECK(more.updates == 7);
  fs::remove_all(out);
}

TEST_CASE("trainer: a corrupt checkpoint_best does not block resuming from checkpoint_last", "[engine][resume]") {
  fs::path out = tmp("corrupt-best");
  train({{"out", out.string()}, {"max_update", 10}, {"validate_interval_updates", 4}});
  std::ofstream(out / "checkpoint_best.safetensors", std::ios::trunc) << "garbage";
  RunResult r = train({{"out", out.string()}, {"max_update", 16}, {"validate_interval_updates", 4}, {"resume", true}});
  CHECK(r.updates == 16);
  CHECK(r.test.count("mse"));
  CHECK_NOTHROW(nl::load_checkpoint(out / "checkpoint_best.safetensors"));  // rewritten by a later validation
  fs::remove_all(out);
}

TEST_CASE("trainer: a checkpoint missing a key names the file and the key", "[engine][resume]") {
  fs::path out = tmp("missing-key");
  train({{"out", out.string()}, {"max_update", 3}});
  nl::Checkpoint ck = nl::load_checkpoint(out / "checkpoint_last.safetensors");
  ck.meta.erase("rng");
  nl::save_checkpoint(out / "checkpoint_last.safetensors", ck.tensors, ck.meta);
  nltest::ToyTask t;
  json s = settings_for(t, {{"out", out.string()}, {"max_update", 3}, {"resume", true}});
  CHECK_THROWS_WITH(Trainer(t, s).run(), Contains("checkpoint_last.safetensors") && Contains("'rng'"));
  ck.meta.erase("state");
  fs::remove_all(out);
}

TEST_CASE("trainer: a damaged checkpoint_last is refused before any update - the results kept", "[engine][resume]") {
  const fs::path out = tmp("damaged-last");
  train({{"out", out.string()}, {"max_update", 3}});
  const json before = read_json_file_at(out / "results.json");
  nl::Checkpoint ck = nl::load_checkpoint(out / "checkpoint_last.safetensors");
  std::string why;
  SECTION("a NaN in a weight") {
    nl::Tensor& w = ck.tensors.begin()->second;
    w = nl::affine(w, std::nan(""), 0.0);
    why = "holds a NaN or an infinity";
  }
  SECTION("an infinity in an optimizer moment") {
    for (auto& [k, t] : ck.tensors)
      if (k.rfind("optimizer.", 0) == 0 && nl::is_floating(t.dtype()))
        t = nl::affine(t, 0.0, std::numeric_limits<double>::infinity());
    why = "holds a NaN or an infinity";
  }
  SECTION("an impossible state") {
    ck.meta["state"]["updates"] = -5;
    why = "impossible (a negative count";
  }
  SECTION("a batch beyond its epoch") {
    ck.meta["state"]["next_batch"] = 1000000000000LL;
    why = "batch 1000000000000 of an epoch of 8 batches";
  }
  nl::save_checkpoint(out / "checkpoint_last.safetensors", ck.tensors, ck.meta);
  nltest::ToyTask t;
  const json s = settings_for(t, {{"out", out.string()}, {"max_update", 6}, {"resume", true}});
  // Before: the run trained on, "diverged" with a hint to lower --lr, and replaced results.json.
  CHECK_THROWS_WITH(Trainer(t, s).run(), Contains("checkpoint_last.safetensors") && Contains(why) && Contains("damaged"));
  CHECK(read_json_file_at(out / "results.json") == before);
  fs::remove_all(out);
}

TEST_CASE("trainer: a divergence after raised limits keeps the finished run's results beside its record", "[engine][resume]") {
  const fs::path out = tmp("diverge-kept");
  train({{"out", out.string()}, {"max_update", 3}});
  const json before = read_json_file_at(out / "results.json");
  nltest::ToyTask t;
  t.nan_at = 2;
  const json s = settings_for(t, {{"out", out.string()}, {"max_update", 6}, {"resume", true}});
  CHECK_THROWS_AS(Trainer(t, s).run(), TrainingDiverged);
  CHECK(read_json_file_at(out / "results.json")["diverged"] == true);
  CHECK(read_json_file_at(out / "results.before-divergence.json") == before);
  fs::remove_all(out);
}

TEST_CASE("trainer: --no-test on a resumed run records the new state without a test", "[engine][resume]") {
  const fs::path out = tmp("no-test");
  train({{"out", out.string()}, {"max_update", 3}});
  REQUIRE(read_json_file_at(out / "results.json")["test"].contains("mse"));
  // Before: the earlier 3-update results were kept, with a warning about an unreadable checkpoint.
  const RunResult r = train({{"out", out.string()}, {"max_update", 6}, {"resume", true}, {"no_test", true}});
  CHECK(r.test.empty());
  const json after = read_json_file_at(out / "results.json");
  CHECK(after["updates"] == 6);
  CHECK(after["test"].empty());
  fs::remove_all(out);
}

TEST_CASE("trainer: a training set that gives no batch is a clear error, not a NaN divergence", "[engine]") {
  const fs::path out = tmp("empty");
  nltest::ToyTask t;
  t.batches = 0;
  const json s = settings_for(t, {{"out", out.string()}});
  CHECK_THROWS_WITH(Trainer(t, s).run(), Contains("gives no batch") && Contains("64 synthetic rows"));
  CHECK_FALSE(fs::exists(out / "results.json"));
  fs::remove_all(out);
}

TEST_CASE("trainer: a NaN loss stops the run naming the update", "[engine]") {
  fs::path out = tmp("nan");
  nltest::ToyTask t;
  t.nan_at = 6;
  json s = settings_for(t, {{"out", out.string()}});
  try {
    Trainer(t, s).run();
    FAIL("no error");
  } catch (const TrainingDiverged& e) {
    CHECK(e.update == 6);
    CHECK_THAT(std::string(e.what()), Contains("nan at update 6") && Contains("--detect-anomaly"));
  }
  fs::remove_all(out);
}

TEST_CASE("trainer: --detect-anomaly names the first op whose output is not finite", "[engine]") {
  fs::path out = tmp("anomaly");
  nltest::ToyTask t;
  t.nan_at = 2;
  json s = settings_for(t, {{"out", out.string()}, {"detect_anomaly", true}});
  CHECK_THROWS_WITH(Trainer(t, s).run(), Contains("detect_anomaly") && Contains("op 'Affine'") && Contains("update 2"));
  CHECK_FALSE(nl::anomaly_detection());  // switched off again after the run
  fs::remove_all(out);
}

TEST_CASE("trainer: schedules need what they decay to", "[engine]") {
  nltest::ToyTask t;
  CHECK_THROWS_WITH(Trainer(t, settings_for(t, {{"lr_scheduler", "linear"}})), Contains("--max-update"));
  CHECK_THROWS_WITH(Trainer(t, settings_for(t, {{"lr_scheduler", "inverse_sqrt"}})), Contains("--warmup-updates"));
  CHECK_THROWS_WITH(Trainer(t, settings_for(t, {{"warmup_updates", 5}})), Contains("--lr-scheduler"));
  CHECK_THROWS_WITH(Trainer(t, settings_for(t, {{"adam_betas", "(0.9, 1.5)"}})), Contains("--adam-betas"));
  CHECK_THROWS_WITH(Trainer(t, settings_for(t, {{"lr_scheduler", "step"}})), Contains("--lr-step-epochs"));
  CHECK_THROWS_WITH(Trainer(t, settings_for(t, {{"lr_step_epochs", 20}})), Contains("--lr-scheduler step"));
  // --min-lr or --warmup-init-lr above --lr: the schedule would rise where it should decay
  CHECK_THROWS_WITH(Trainer(t, settings_for(t, {{"lr_scheduler", "cosine"}, {"max_update", 10}, {"min_lr", 5.0}, {"lr", 0.001}})),
                    Contains("--min-lr") && Contains("--lr"));
  CHECK_THROWS_WITH(Trainer(t, settings_for(t, {{"lr_scheduler", "linear"}, {"max_update", 10}, {"warmup_updates", 2},
                                                {"warmup_init_lr", 10.0}, {"lr", 0.001}})),
                    Contains("--warmup-init-lr") && Contains("--lr"));
}

TEST_CASE("trainer: --lr-scheduler step multiplies the lr by --lr-gamma every --lr-step-epochs epochs", "[engine]") {
  fs::path out = tmp("step");
  // 8 batches, update_freq 2: 4 updates per epoch, so the lr halves after updates 8 and 16.
  train({{"out", out.string()}, {"max_epoch", 5}, {"update_freq", 2}, {"log_interval", 1}, {"lr", 0.01},
         {"lr_scheduler", "step"}, {"lr_step_epochs", 2}, {"lr_gamma", 0.5}});
  std::ifstream f(out / "metrics.jsonl");
  std::string line;
  std::map<int64_t, double> lr;
  while (std::getline(f, line)) {
    const json j = json::parse(line);
    if (j.contains("lr")) lr[j.at("update").get<int64_t>()] = j.at("lr").get<double>();
  }
  REQUIRE(lr.size() == 20);
  CHECK(lr.at(1) == 0.01);
  CHECK(lr.at(8) == 0.01);
  CHECK(lr.at(9) == 0.005);
  CHECK(lr.at(16) == 0.005);
  CHECK(lr.at(17) == 0.0025);
  CHECK(lr.at(20) == 0.0025);
  fs::remove_all(out);
}

// ---- the run folder (issue 29, items 2, 3, 9, 10, 11): a second writer refused with the holder's pid, a
// new run never replaces another run's records without --overwrite, a resume never replaces sound results
// with NaN or empty ones, output options may change on resume, stale checkpoint temporaries removed at
// start, and a heartbeat during long evaluation passes.

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
  const std::string before = read_json_file_at(out / "results.json").dump();
  CHECK_THROWS_WITH(train({{"out", out.string()}, {"max_epoch", 2}, {"seed", 2}}),
                    Contains("already holds a run") && Contains("results.json") && Contains("--resume") &&
                        Contains("--overwrite") && Contains("another --out"));
  CHECK(read_json_file_at(out / "results.json").dump() == before);  // untouched
  CHECK(fs::exists(out / "checkpoint1.safetensors"));
  // --overwrite replaces the old run's records, so none of them mixes with the new run's.
  RunResult r = train({{"out", out.string()}, {"max_epoch", 2}, {"seed", 2}, {"overwrite", true}, {"save_interval", 0}});
  CHECK(r.updates == 16);
  CHECK_FALSE(fs::exists(out / "checkpoint1.safetensors"));
  CHECK(read_json_file_at(out / "results.json")["settings"]["seed"] == 2);
  fs::remove_all(out);
}

TEST_CASE("run folder: resuming a finished run whose checkpoint_best is unreadable keeps its sound results",
          "[engine][run-folder][resume]") {
  const fs::path out = tmp("sound");
  const RunResult first = train({{"out", out.string()}, {"max_update", 5}});
  REQUIRE(first.test.count("mse"));
  const json before = read_json_file_at(out / "results.json");
  REQUIRE(before["test"].contains("mse"));
  std::ofstream(out / "checkpoint_best.safetensors", std::ios::trunc) << "garbage";
  // Before: "test": {} and best_valid NaN replaced the results, exit 0.
  const RunResult again = train({{"out", out.string()}, {"max_update", 5}, {"resume", true}});
  CHECK(again.updates == 5);
  REQUIRE(again.test.count("mse"));
  CHECK(again.test.at("mse") == before["test"]["mse"].get<double>());
  CHECK(again.best_valid == before["best_valid"].get<double>());
  const json after = read_json_file_at(out / "results.json");
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
