// `normlab grad probe mnist` behind the CLI: a tiny run writes well-formed JSON-lines with finite
// values and the plots; LayerNorm-simple's per-row gradient mean stays at 0 while DetachNorm's does not.
#include <catch2/catch.hpp>

#include <cmath>
#include <unistd.h>

#include "engine/task_registry.h"
#include "engine/trainer.h"
#include "nn/models/mnist_cnn.h"
#include "probes/grad_probe.h"
#include "report/metrics_log.h"
#include "tasks/mnist.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using namespace nlapp;

TEST_CASE("grad probe: per-row statistics of x, g and dL/dx", "[grad]") {
  // Two rows of H = 2: row means, |means| and biased variances averaged over the rows.
  nl::Tensor x = nl::Tensor::from_vector<double>({0, 2, 1, 5}, {2, 2});   // sigma 1 and 2
  nl::Tensor g = nl::Tensor::from_vector<double>({1, 3, -2, 0}, {2, 2});  // means 2, -1; vars 1, 1
  nl::Tensor d = nl::Tensor::from_vector<double>({1, -1, 4, 4}, {2, 2});
  ProbeStats s = probe_stats(x, g, d);
  CHECK(s.x_sigma == Approx(1.5));
  CHECK(s.g_mean == Approx(0.5));
  CHECK(s.g_abs_mean == Approx(1.5));
  CHECK(s.g_var == Approx(1.0));
  CHECK(s.dx_mean == Approx(2.0));
  CHECK(s.dx_var == Approx(0.5));
  CHECK(s.pred_abs_mean == Approx((2.0 / 1 + 1.0 / 2) / 2));
  CHECK(s.pred_var == Approx((1.0 + 0.25) / 2));
  CHECK_THROWS_AS(probe_stats(x, g, nl::Tensor::zeros({2, 3}, nl::DType::Float64)), std::invalid_argument);
}

TEST_CASE("grad probe: 5 steps of 2 variants on Fashion-MNIST", "[grad]") {
  NL_SKIP_IF_MISSING(fs::path(kDefaultMnistData));
  ProbeConfig c;
  c.norms = {"layernorm-simple", "detachnorm"};
  c.steps = 5;
  c.quiet = true;
  c.out = fs::temp_directory_path() / ("normlab-grad-probe-" + std::to_string(::getpid()));
  fs::remove_all(c.out);
  auto task = make_task("mnist");
  const auto runs = run_grad_probe(*task, task_schema(*task).defaults(), c);
  REQUIRE(runs.size() == 2);
  for (const auto& run : runs) {
    INFO(run.norm);
    const auto recs = read_metrics_log(c.out / (run.norm + ".jsonl"));
    REQUIRE(recs.size() == 5);
    for (size_t i = 0; i < recs.size(); ++i) {
      CHECK(recs[i]["step"] == (int64_t)i + 1);
      for (const auto& f : probe_fields()) {
        INFO(f);
        REQUIRE(recs[i].contains(f));
        REQUIRE(recs[i][f].is_number());
        CHECK(std::isfinite(recs[i][f].get<double>()));
      }
      CHECK(recs[i]["g_abs_mean"].get<double>() > 0);
    }
    CHECK(fs::file_size(c.out / (run.norm + ".svg")) > 500);
  }
  // Theorem 1 live: LayerNorm-simple's per-row mean is 0 up to float32 rounding, DetachNorm's is not.
  const auto& ln = runs[0].records.back();
  const auto& dn = runs[1].records.back();
  CHECK(ln["dx_abs_mean"].get<double>() < 1e-4 * ln["pred_abs_mean"].get<double>());
  CHECK(dn["dx_abs_mean"].get<double>() == Approx(dn["pred_abs_mean"].get<double>()).epsilon(1e-2));
  CHECK(fs::file_size(c.out / "mean-dx.svg") > 500);
  fs::remove_all(c.out);
}

TEST_CASE("grad probe: a --layer that is not a norm names it, its type and the layers that can be probed", "[grad]") {
  using Catch::Matchers::Contains;
  nl::MnistCnn model(nl::MnistCnnConfig{});  // conv1, conv2, fc1, norm, fc2
  CHECK(&find_grad_probe_layer(model, "") == &find_grad_probe_layer(model, "norm"));
  CHECK_THROWS_WITH(find_grad_probe_layer(model, "fc1"),
                    Contains("grad probe: --layer fc1 is a Linear, not a norm layer") &&
                        Contains("needs a layer whose output has its input's shape") &&
                        Contains("--layer takes one of: norm"));
  CHECK_THROWS_WITH(find_grad_probe_layer(model, "nosuch"), Contains("no module 'nosuch'"));
}
