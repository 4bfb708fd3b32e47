// --resume with batch-statistic norms: a run killed after any update and resumed continues PowerNorm
// (its `iters` counter past the warm-up, running_phi, the backward's ema_gz) and BatchNorm (running
// mean/var, num_batches_tracked) bit-identically, as tests/engine/test_trainer.cpp does for plain
// parameters.
#include <catch2/catch.hpp>

#include <filesystem>
#include <unistd.h>

#include "engine/trainer.h"
#include "nn/norm/factory.h"
#include "nn/sequential.h"
#include "optim/checkpoint.h"
#include "report/metrics_log.h"
#include "toy_task.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace nlapp;

namespace {
// The toy regression through Linear(4, 8) -> norm -> Linear(8, 1); evaluation in eval mode, as the
// real tasks do (ToyTask's own evaluate keeps the mode, which would count validations as PN steps).
class NormToyTask : public nltest::ToyTask {
 public:
  explicit NormToyTask(std::string norm) : norm_(std::move(norm)) {}
  std::shared_ptr<nl::Module> build_model(const json&) override {
    json o = norm_ == "powernorm" ? json{{"warmup_iters", 3}} : json::object();
    return std::make_shared<nl::Sequential>(std::initializer_list<std::shared_ptr<nl::Module>>{
        std::make_shared<nl::Linear>(4, 8), nl::make_norm(norm_, 8, o), std::make_shared<nl::Linear>(8, 1)});
  }
  Metrics evaluate(nl::Module& m, const std::string& split) const override {
    const bool was = m.is_training();
    m.eval();
    Metrics r = ToyTask::evaluate(m, split);
    m.train(was);
    return r;
  }

 private:
  std::string norm_;
};

RunResult train(const std::string& norm, json over) {
  NormToyTask t(norm);
  json s = task_schema(t).defaults();
  s["quiet"] = true;
  for (auto& [k, v] : over.items()) s[k] = v;
  t.setup(s);
  return Trainer(t, s).run();
}

fs::path tmp(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("normlab-norm-resume-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}
}  // namespace

TEST_CASE("trainer: --resume continues PowerNorm and BatchNorm bit-identically", "[engine][resume][masked_norm]") {
  for (const char* norm : {"powernorm", "batchnorm"}) {
    INFO(norm);
    const fs::path full = tmp(std::string("full-") + norm), part = tmp(std::string("part-") + norm);
    train(norm, {{"out", full.string()}, {"max_epoch", 3}, {"save_interval_updates", 1}});
    // What a SIGKILL after update 11 leaves (past PN's 3 warm-up steps).
    fs::copy(full, part, fs::copy_options::recursive);
    fs::copy_file(full / "checkpoint_2_11.safetensors", part / "checkpoint_last.safetensors",
                  fs::copy_options::overwrite_existing);
    fs::remove(part / "results.json");
    const RunResult r =
        train(norm, {{"out", part.string()}, {"max_epoch", 3}, {"save_interval_updates", 1}, {"resume", true}});
    CHECK(r.updates == 24);
    const auto a = nl::load_checkpoint(full / "checkpoint_last.safetensors").tensors;
    const auto b = nl::load_checkpoint(part / "checkpoint_last.safetensors").tensors;
    REQUIRE(a.size() == b.size());
    const std::string buf = std::string("model.1.") + (std::string(norm) == "powernorm" ? "iters" : "num_batches_tracked");
    REQUIRE(a.count(buf));
    CHECK(a.at(buf).item() == 24.0);
    if (std::string(norm) == "powernorm") REQUIRE(a.count("model.1.ema_gz"));
    for (const auto& [k, v] : a) {
      INFO(k);
      REQUIRE(b.count(k));
      CHECK(v.to_vector<double>() == b.at(k).to_vector<double>());
    }
    const auto ma = read_metrics_log(full / "metrics.jsonl"), mb = read_metrics_log(part / "metrics.jsonl");
    REQUIRE(ma.size() == mb.size());
    for (size_t i = 0; i < ma.size(); ++i) CHECK(ma[i] == mb[i]);
    fs::remove_all(full);
    fs::remove_all(part);
  }
}
