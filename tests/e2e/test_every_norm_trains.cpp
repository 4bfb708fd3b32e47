// Every norm name of nl::norm_names() trains the MNIST CNN (the norm after a Linear, [N, D]) on
// Fashion-MNIST and the Multi30k Transformer (the norm in the encoder slots; a batch-statistic --norm
// leaves the decoder on layernorm) through the tasks' own models, batches and losses: a few Adam
// updates with finite losses that go down on a repeated batch, then a finite eval-mode loss on another
// batch.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <unistd.h>

#include "cli_util.h"
#include "engine/task_registry.h"
#include "engine/trainer.h"
#include "nn/norm/factory.h"
#include "nn/norm/masked_norm.h"
#include "nn/transformer/transformer.h"
#include "optim/optimizer.h"
#include "tasks/mnist.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using namespace nlapp;
using json = nlohmann::json;

namespace {
// Four Adam updates on the first training batch; returns the losses (the last one after the updates).
std::vector<double> train_repeated(Task& task, nl::Module& model, double lr) {
  nl::AdamOptions o;
  o.lr = lr;
  nl::Adam opt(model.parameters(), o);
  model.train();
  const auto batch = task.train_batch(0, 0);
  std::vector<double> losses;
  for (int i = 0; i < 5; ++i) {
    nl::Variable l = task.loss(model, *batch);
    losses.push_back(l.item());
    if (i == 4) break;
    opt.zero_grad();
    l.backward();
    opt.step();
  }
  return losses;
}

// The loss of a second training batch in eval mode (running statistics for the batch-statistic norms).
double eval_loss(Task& task, nl::Module& model) {
  model.eval();
  nl::NoGradGuard ng;
  return task.loss(model, *task.train_batch(0, 1)).item();
}

void check_trains(const std::vector<double>& losses) {
  for (double l : losses) REQUIRE(std::isfinite(l));
  CHECK(losses.back() < losses.front());
}
}  // namespace

TEST_CASE("every norm trains the MNIST CNN", "[e2e][norms]") {
  NL_SKIP_IF_MISSING(fs::path(kDefaultMnistData));
  auto task = make_task("mnist");
  json s = task_schema(*task).defaults();
  s["hidden"] = 32;
  task->setup(s);
  for (const auto& norm : nl::norm_names()) {
    INFO(norm);
    s["norm"] = norm;
    nl::manual_seed(41);
    auto model = task->build_model(s);
    check_trains(train_repeated(*task, *model, 1e-3));
    CHECK(std::isfinite(eval_loss(*task, *model)));
  }
}

TEST_CASE("every norm trains the Multi30k Transformer in the encoder slots", "[e2e][norms][mt]") {
  const fs::path raw = nltest::data_path("multi30k");
  NL_SKIP_IF_MISSING(raw);
  const fs::path tmp = fs::temp_directory_path() / ("normlab-every-norm-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  auto [rc, out] = nltest::run_cli("data prepare multi30k --data " + raw.string() + " --out " + (tmp / "data").string() +
                                   " --vocab-size 1000");
  INFO(out);
  REQUIRE(rc == 0);
  auto task = make_task("mt");
  json s = task_schema(*task).defaults();
  const json tiny{{"data", (tmp / "data").string()}, {"d_model", 32}, {"n_heads", 4}, {"ffn_dim", 64},
                  {"encoder_layers", 1}, {"decoder_layers", 1}, {"max_tokens", 512}, {"warmup_updates", 2},
                  {"dropout", 0.0}, {"attention_dropout", 0.0}};
  for (auto& [k, v] : tiny.items()) s[k] = v;
  task->setup(s);
  for (const auto& norm : nl::norm_names()) {
    INFO(norm);
    s["norm"] = norm;
    nl::manual_seed(42);
    auto model = task->build_model(s);
    auto& tm = static_cast<nl::TransformerModel&>(*model);
    CHECK(tm.encoder->layer_list[0]->self_attn_layer_norm->type_name() ==
          nl::make_norm(norm, 4)->type_name());
    CHECK(nl::uses_batch_statistics(*tm.decoder->layer_list[0]->final_layer_norm) == false);
    check_trains(train_repeated(*task, *model, 3e-3));
    CHECK(std::isfinite(eval_loss(*task, *model)));
  }
  fs::remove_all(tmp);
}
