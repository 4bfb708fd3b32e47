// Task vit-cifar: a small ViT learns a CIFAR-10 subset (the loss falls within 200 updates; skipped
// without ../shared/data/cifar10), and `reproduce vit-cifar --variants layernorm,lng` needs --groups.
#include <catch2/catch.hpp>

#include "cli_util.h"
#include <cmath>

#include "engine/task_registry.h"
#include "engine/trainer.h"
#include "optim/optimizer.h"
#include "tasks/vit_cifar/vit_cifar_task.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using namespace nlapp;
using json = nlohmann::json;
using Catch::Matchers::Contains;

TEST_CASE("vit-cifar: a small ViT learns a CIFAR-10 subset within 200 updates", "[e2e][vit][cifar10]") {
  const fs::path cifar = nltest::data_path("cifar10");
  NL_SKIP_IF_MISSING(cifar / "data_batch_1.bin.gz");
  auto task = make_vit_cifar_task();
  json s = task_schema(*task).defaults();
  const fs::path out = fs::temp_directory_path() / ("normlab-vit-" + std::to_string(::getpid()));
  s.update({{"data", cifar.string()}, {"batches", json::array({1})}, {"valid_size", 100}, {"train_subset", 256}, {"test_subset", 100},
            {"augment", false}, {"batch_size", 16}, {"d_model", 48}, {"layers", 2}, {"n_heads", 3}, {"ffn_dim", 96},
            {"norm", "lng"}, {"groups", 4}, {"out", out.string()}});
  task->setup(s);
  nl::manual_seed(1);
  auto model = task->build_model(s);
  nl::AdamOptions o;
  o.lr = 1e-3;
  nl::Adam opt(model->parameters(), o);
  model->train();
  const int64_t per_epoch = task->epoch_size(0);
  REQUIRE(per_epoch == 16);
  double first = 0, last = 0;
  for (int u = 0; u < 200; ++u) {
    const auto batch = task->train_batch((uint64_t)(u / per_epoch), u % per_epoch);
    nl::Variable l = task->loss(*model, *batch);
    REQUIRE(std::isfinite(l.item()));
    if (u < 20) first += l.item() / 20;
    if (u >= 180) last += l.item() / 20;
    opt.zero_grad();
    l.backward();
    opt.step();
  }
  INFO("mean loss of updates 1-20 " << first << ", of updates 181-200 " << last);
  CHECK(first > 2.0);          // about ln 10 at the start
  CHECK(last < 0.6 * first);  // it fits the subset
  fs::remove_all(out);
}

TEST_CASE("reproduce: --variants takes any norm of the task and lng needs --groups", "[e2e][vit]") {
  auto [rc, text] = nltest::run_cli("reproduce vit-cifar --variants layernorm,lng --max-epoch 1 --out /nonexistent/x");
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("--variants lng with --groups 1 is layernorm itself") && Contains("--groups G"));
  auto [rc2, text2] = nltest::run_cli("reproduce lnnet --variants instancenorm --out /nonexistent/x");
  CHECK(rc2 != 0);
  CHECK_THAT(text2, Contains("task lnnet has no norm 'instancenorm'"));
  auto [rc3, text3] = nltest::run_cli("reproduce lnnet --variants bogus --out /nonexistent/x");
  CHECK(rc3 != 0);
  CHECK_THAT(text3, Contains("bogus"));
}
