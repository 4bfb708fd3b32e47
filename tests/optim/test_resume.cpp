// Optimizer + schedule state through a checkpoint: save → load → continue is bit-identical to an
// uninterrupted run, for Adam, AdamW and SGD with Nesterov momentum.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>

#include "autograd/functions.h"
#include "optim/checkpoint.h"
#include "optim/optimizer.h"
#include "optim/schedule.h"
#include "tensor/ops.h"

using namespace nl;
using Catch::Matchers::Contains;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
struct Model {
  Variable w, b;
  std::vector<Variable> params() const { return {w, b}; }
};

Model make_model() {
  manual_seed(11);
  return {Variable(Tensor::randn({4, 3}), true, "w"), Variable(Tensor::randn({3}), true, "b")};
}

// One training step on a fixed regression batch that depends on the step number.
void train_step(Model& m, Optimizer& opt, const Schedule& sched, int64_t step) {
  manual_seed(1000 + (uint64_t)step);
  Tensor x = Tensor::randn({8, 4}), y = Tensor::randn({8, 3});
  opt.zero_grad();
  Variable pred = add(matmul(Variable(x), m.w), m.b);
  Variable loss = mean(square(sub(pred, Variable(y))));
  loss.backward();
  opt.set_lr(sched.lr(step));
  opt.step();
}

bool bits_equal(const Tensor& a, const Tensor& b) {
  auto x = a.to_vector<float>(), y = b.to_vector<float>();
  return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);
}

void check_resume(const std::function<std::unique_ptr<Optimizer>(const std::vector<Variable>&)>& make) {
  auto sched = make_schedule("inverse_sqrt", {{"lr", 0.05}, {"warmup_updates", 4}, {"warmup_init_lr", 1e-3}});
  const int64_t total = 12, cut = 5;

  Model ref = make_model();
  auto opt_ref = make(ref.params());
  for (int64_t s = 0; s < total; ++s) train_step(ref, *opt_ref, *sched, s);

  // Interrupted run: `cut` steps, checkpoint (model + optimizer + schedule + step), fresh objects, resume.
  const fs::path p = fs::temp_directory_path() / ("normlab_resume_" + std::to_string(::getpid()) + ".safetensors");
  {
    Model m = make_model();
    auto opt = make(m.params());
    for (int64_t s = 0; s < cut; ++s) train_step(m, *opt, *sched, s);
    TensorMap t{{"model.w", m.w.data()}, {"model.b", m.b.data()}};
    json meta;
    meta["optimizer"] = opt->save_state(t);
    meta["schedule"] = sched->to_json();
    meta["step"] = cut;
    save_checkpoint(p, t, meta);
  }
  Checkpoint c = load_checkpoint(p);
  fs::remove(p);
  Model m{Variable(Tensor::zeros({4, 3}), true, "w"), Variable(Tensor::zeros({3}), true, "b")};
  m.w.set_data(c.tensors.at("model.w"));
  m.b.set_data(c.tensors.at("model.b"));
  auto opt = make(m.params());
  opt->load_state(c.tensors, c.meta["optimizer"]);
  auto sched2 = schedule_from_json(c.meta["schedule"]);
  for (int64_t s = c.meta["step"].get<int64_t>(); s < total; ++s) train_step(m, *opt, *sched2, s);

  CHECK(bits_equal(m.w.data(), ref.w.data()));
  CHECK(bits_equal(m.b.data(), ref.b.data()));
  // And the optimizer states agree too.
  TensorMap ta, tb;
  json ja = opt->save_state(ta), jb = opt_ref->save_state(tb);
  CHECK(ja == jb);
  REQUIRE(ta.size() == tb.size());
  for (const auto& [k, v] : ta) CHECK(bits_equal(v, tb.at(k)));
}
}  // namespace

TEST_CASE("resume: Adam state through a checkpoint is bit-identical", "[optim][checkpoint]") {
  check_resume([](const std::vector<Variable>& ps) { return std::make_unique<Adam>(ps, AdamOptions{.weight_decay = 1e-2}); });
}

TEST_CASE("resume: AdamW state through a checkpoint is bit-identical", "[optim][checkpoint]") {
  check_resume([](const std::vector<Variable>& ps) { return std::make_unique<AdamW>(ps, AdamOptions{.weight_decay = 0.1}); });
}

TEST_CASE("resume: SGD Nesterov momentum state through a checkpoint is bit-identical", "[optim][checkpoint]") {
  check_resume([](const std::vector<Variable>& ps) {
    return std::make_unique<SGD>(ps, SGDOptions{.momentum = 0.9, .weight_decay = 1e-4, .nesterov = true});
  });
}

TEST_CASE("resume: loading state into a mismatched optimizer fails clearly", "[optim][checkpoint]") {
  Model m = make_model();
  Adam adam(m.params());
  m.w.set_grad(Tensor::ones({4, 3}));
  adam.step();
  TensorMap t;
  json st = adam.save_state(t);
  SGD sgd(m.params());
  CHECK_THROWS_WITH(sgd.load_state(t, st), Contains("saved by optimizer 'adam', loading into 'sgd'"));
  Adam fewer(std::vector<Variable>{m.w});
  CHECK_THROWS_WITH(fewer.load_state(t, st), Contains("2 saved parameters, optimizer has 1"));
  Model other{Variable(Tensor::zeros({3, 4}), true, "w"), m.b};
  Adam wrong(other.params());
  CHECK_THROWS_WITH(wrong.load_state(t, st), Contains("optimizer.g0.p0.exp_avg") && Contains("[4, 3]"));
  TensorMap missing = t;
  missing.erase("optimizer.g0.p0.exp_avg_sq");
  Adam again(m.params());
  CHECK_THROWS_WITH(again.load_state(missing, st), Contains("'optimizer.g0.p0.exp_avg_sq' is missing"));
}
