// `normlab grad batch-stats`: the batch-statistics hook of BatchNorm / PN-V / PN hands the probe the
// tape's own statistics and the running ones from before the update (checked against hand formulas of
// dL/dmu_B, dL/dsigma_B^2 and dL/dpsi_B^2 with padding); the probe's (1/d)-norms on known values; a
// short run on Fashion-MNIST through the CLI writes finite JSON lines (null where a statistic or its
// gradient does not exist) and the plots; a per-token norm is refused with the fix.
#include <catch2/catch.hpp>

#include <cmath>
#include <unistd.h>

#include "autograd/functions.h"
#include "cli_util.h"
#include "engine/task_registry.h"
#include "engine/trainer.h"
#include "nn/norm/factory.h"
#include "probes/batch_stats_probe.h"
#include "report/metrics_log.h"
#include "tasks/mnist.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using namespace nlapp;
using nl::Tensor;
using nl::Variable;
using Catch::Matchers::Contains;

TEST_CASE("batch-stats probe: (1/d)-norms of distances and gradients", "[grad][masked_norm]") {
  nl::BatchStats s;
  s.mean = Variable(Tensor::from_vector<double>({1, 2}, {1, 2}), true);
  s.var = Variable(Tensor::from_vector<double>({3, 4}, {1, 2}), true);
  s.running_mean = Tensor::from_vector<double>({0, 0}, {2});
  s.running_var = Tensor::from_vector<double>({1, 1}, {2});
  nl::sum(nl::add(nl::mul(s.mean, Variable(Tensor::from_vector<double>({3, 4}, {1, 2}))),
                  nl::mul(s.var, Variable(Tensor::from_vector<double>({-6, 8}, {1, 2})))))
      .backward();
  const BatchStatsValues v = batch_stats_values(s);
  CHECK(v.mean_dist == Approx(std::sqrt(5.0) / 2));
  CHECK(v.var_dist == Approx(std::sqrt(13.0) / 2));
  CHECK(v.grad_mean == Approx(5.0 / 2));
  CHECK(v.grad_var == Approx(10.0 / 2));
  nl::BatchStats pn;  // PN: psi^2 without gradient, no mean
  pn.var = Variable(Tensor::from_vector<double>({3, 4}, {1, 2}));
  pn.running_var = s.running_var;
  const BatchStatsValues w = batch_stats_values(pn);
  CHECK(std::isnan(w.mean_dist));
  CHECK(w.var_dist == Approx(std::sqrt(13.0) / 2));
  CHECK(std::isnan(w.grad_mean));
  CHECK(std::isnan(w.grad_var));
  const auto rec = batch_stats_record(3, 0.5, w);
  CHECK(rec["mean_dist"].is_null());
  CHECK(rec["var_dist"].get<double>() == Approx(std::sqrt(13.0) / 2));
}

TEST_CASE("batch-stats hook: the tape's statistics over kept rows and their exact gradients", "[grad][masked_norm]") {
  // x [4, 2], row 3 is padding; y = gamma (x - mu) / s + beta; L = sum(G ⊙ y).
  const std::vector<double> xv{1, -2, 3, 0.5, -1, 4, 9, 9}, G{0.3, -1, 2, 0.5, -0.7, 1.5, 0.4, -0.2};
  const std::vector<double> gamma{1.5, -0.8};
  const Tensor pad = Tensor::from_vector<int64_t>({0, 0, 0, 1}, {4});
  for (const char* name : {"batchnorm", "powernorm-v", "powernorm"}) {
    INFO(name);
    auto norm = std::dynamic_pointer_cast<nl::MaskedNorm>(nl::make_norm(name, 2, std::string(name) == "powernorm" ? nlohmann::json{{"dtype", "float64"}, {"layer_scale", false}}
                                                                   : nlohmann::json{{"dtype", "float64"}}));
    REQUIRE(norm);
    Tensor w = norm->param("weight").data();
    w.copy_(Tensor::from_vector<double>(gamma, {2}));
    std::vector<nl::BatchStats> seen;
    const int h = norm->register_batch_stats_hook([&](nl::MaskedNorm&, const nl::BatchStats& s) {
      nl::BatchStats k = s;
      if (k.mean.defined() && k.mean.requires_grad()) k.mean.retain_grad();
      if (k.var.defined() && k.var.requires_grad()) k.var.retain_grad();
      seen.push_back(k);
    });
    Variable x(Tensor::from_vector<double>(xv, {4, 2}), true);
    Variable y = (*norm)(x, pad);
    nl::sum(nl::mul(y, Variable(Tensor::from_vector<double>(G, {4, 2})))).backward();
    REQUIRE(seen.size() == 1);
    const nl::BatchStats& s = seen[0];
    for (int c = 0; c < 2; ++c) {
      const double x0 = xv[c], x1 = xv[2 + c], x2 = xv[4 + c];
      const double mu = (x0 + x1 + x2) / 3;
      const bool bn = std::string(name) == "batchnorm";
      const double var = bn ? ((x0 - mu) * (x0 - mu) + (x1 - mu) * (x1 - mu) + (x2 - mu) * (x2 - mu)) / 3
                            : (x0 * x0 + x1 * x1 + x2 * x2) / 3;
      CHECK(s.var.data().to_vector<double>()[c] == Approx(var).epsilon(1e-12));
      CHECK(s.running_var.to_vector<double>()[c] == 1.0);  // before this forward's update
      if (std::string(name) == "powernorm") {
        CHECK_FALSE(s.var.requires_grad());  // the approximate backward: no gradient through psi_B
        continue;
      }
      // dL/dvar = sum over ALL rows (pad outputs are computed too) of gamma G_j c_j * (-1/2)(var + eps)^(-3/2),
      // with c_j = x_j - mu (BN) or x_j (PN-V); dL/dmu = -gamma sum_j G_j / sqrt(var + eps) (BN).
      double gv = 0, gm = 0;
      for (int r = 0; r < 4; ++r) {
        gv += gamma[c] * G[2 * r + c] * (xv[2 * r + c] - (bn ? mu : 0.0));
        gm += gamma[c] * G[2 * r + c];
      }
      gv *= -0.5 * std::pow(var + 1e-5, -1.5);
      gm *= -1.0 / std::sqrt(var + 1e-5);
      CHECK(s.var.grad().to_vector<double>()[c] == Approx(gv).epsilon(1e-9));
      if (bn) {
        CHECK(s.mean.data().to_vector<double>()[c] == Approx(mu).epsilon(1e-12));
        CHECK(s.running_mean.to_vector<double>()[c] == 0.0);
        CHECK(s.mean.grad().to_vector<double>()[c] == Approx(gm).epsilon(1e-9));
      } else {
        CHECK_FALSE(s.mean.defined());
      }
    }
    // Eval forwards call no hook; a removed hook is not called.
    norm->eval();
    (*norm)(x, pad);
    CHECK(seen.size() == 1);
    norm->train();
    norm->remove_batch_stats_hook(h);
    (*norm)(x, pad);
    CHECK(seen.size() == 1);
  }
}

TEST_CASE("grad batch-stats: 4 updates of BN, PN-V and PN on Fashion-MNIST through the CLI", "[grad][masked_norm]") {
  NL_SKIP_IF_MISSING(fs::path(kDefaultMnistData));
  const fs::path out = fs::temp_directory_path() / ("normlab-batch-stats-" + std::to_string(::getpid()));
  fs::remove_all(out);
  auto [rc, text] = nltest::run_cli("grad batch-stats mnist --hidden 32 --steps 4 --quiet --out " + out.string());
  INFO(text);
  REQUIRE(rc == 0);
  CHECK_THAT(text, Contains("| batchnorm") && Contains("| powernorm-v") && Contains("| powernorm "));
  for (const char* norm : {"batchnorm", "powernorm-v", "powernorm"}) {
    INFO(norm);
    const auto recs = read_metrics_log(out / (std::string(norm) + ".jsonl"));
    REQUIRE(recs.size() == 4);
    const std::string n(norm);
    for (size_t i = 0; i < recs.size(); ++i) {
      CHECK(recs[i]["step"] == (int64_t)i + 1);
      CHECK(recs[i]["var_dist"].get<double>() > 0);
      CHECK(recs[i]["mean_dist"].is_null() == (n != "batchnorm"));
      CHECK(recs[i]["grad_mean"].is_null() == (n != "batchnorm"));
      CHECK(recs[i]["grad_var"].is_null() == (n == "powernorm"));
      if (n != "powernorm") CHECK(recs[i]["grad_var"].get<double>() > 0);
    }
    CHECK(fs::file_size(out / (n + ".svg")) > 500);
  }
  CHECK(fs::file_size(out / "var-dist.svg") > 500);
  CHECK(fs::file_size(out / "grad-var.svg") > 500);
  std::tie(rc, text) = nltest::run_cli("grad batch-stats mnist --norm layernorm --steps 1 --out " + out.string());
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("keeps no batch statistics") && Contains("batchnorm, powernorm-v or powernorm"));
  std::tie(rc, text) = nltest::run_cli("grad batch-stats mnist --norm batchnorm --layer fc1 --steps 1 --out " + out.string());
  CHECK(rc != 0);
  CHECK_THAT(text, Contains("not a batch-statistic norm"));
  fs::remove_all(out);
}
