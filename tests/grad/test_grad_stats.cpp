// `normlab grad stats` behind the CLI reproduces Theorem 1 of Xu et al. 2019 from autograd through the
// fused kernels: every (in)equality holds in every sample, and the averages scale as 1/sigma, 1/sigma^2.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include "common/grad_stats.h"
#include "nn/norm/factory.h"

using namespace nlapp;
using Catch::Matchers::Contains;

namespace {
const std::vector<StatsRow>& rows() {
  static const std::vector<StatsRow> r = [] {
    StatsConfig c;
    c.norms = nl::layernorm_family_names();
    c.H = 64;
    c.samples = 400;
    c.chunk = 150;  // several chunks, the last one partial
    return gradient_stats(c);
  }();
  return r;
}
const StatsRow& row(const std::string& norm, double scale) {
  for (const auto& r : rows())
    if (r.norm == norm && r.scale == scale) return r;
  FAIL("no row " << norm << " " << scale);
  throw 0;
}
}  // namespace

TEST_CASE("grad stats: Theorem 1 holds in every sample, for every variant and scale", "[grad]") {
  REQUIRE(rows().size() == nl::layernorm_family_names().size() * 3);
  for (const auto& r : rows()) {
    INFO(r.norm << " scale " << r.scale);
    CHECK(r.samples == 400);
    CHECK(r.mean_share == 1.0);
    CHECK(r.var_share == 1.0);
    CHECK(r.max_mean_err < 1e-10);
  }
}

TEST_CASE("grad stats: the statements of Theorem 1, variant by variant", "[grad]") {
  for (double s : {1.0, 10.0, 0.1}) {
    INFO("scale " << s);
    // LayerNorm-simple (and LayerNorm at init, AdaNorm): mean 0 to rounding, variance strictly below D_g/sigma^2.
    for (const char* n : {"layernorm-simple", "layernorm", "adanorm"}) {
      INFO(n);
      CHECK(std::abs(row(n, s).mean) < 1e-12 / s);
      CHECK(row(n, s).max_var_excess <= 1e-12);
      CHECK(row(n, s).var < 0.999 * row(n, s).pred_var);
    }
    // DetachNorm: mean gbar/sigma, variance D_g/sigma^2 (equalities).
    CHECK(row("detachnorm", s).mean == Approx(row("detachnorm", s).pred_mean).epsilon(1e-12));
    CHECK(row("detachnorm", s).var == Approx(row("detachnorm", s).pred_var).epsilon(1e-12));
    CHECK(std::abs(row("detachnorm", s).mean) > 0.1 / s);  // gbar != 0 by construction: not trivially 0
    // detach-mean: mean gbar/sigma; detach-variance: mean 0 and variance D_g/sigma^2.
    CHECK(row("detach-mean", s).mean == Approx(row("detach-mean", s).pred_mean).epsilon(1e-12));
    CHECK(row("detach-mean", s).var < row("detach-mean", s).pred_var);
    CHECK(std::abs(row("detach-variance", s).mean) < 1e-12 / s);
    CHECK(row("detach-variance", s).var == Approx(row("detach-variance", s).pred_var).epsilon(1e-12));
  }
  // Re-scaling: x 10 times larger -> gradient mean 10x and variance 100x smaller (sigma scales with x).
  CHECK(row("detachnorm", 10.0).mean == Approx(row("detachnorm", 1.0).mean / 10).epsilon(1e-10));
  CHECK(row("layernorm-simple", 0.1).var == Approx(row("layernorm-simple", 1.0).var * 100).epsilon(1e-10));
  CHECK(row("none", 10.0).var == Approx(row("none", 1.0).var).epsilon(1e-12));  // no norm, no re-scaling
}

TEST_CASE("grad stats: the code's estimator satisfies the statements with D in place of sigma", "[grad]") {
  StatsConfig c;
  c.norms = {"layernorm-simple", "detachnorm", "detach-mean", "detach-variance"};
  c.H = 32;
  c.samples = 100;
  c.est = nl::theory::Estimator::released_code();
  for (const auto& r : gradient_stats(c)) {
    INFO(r.norm << " " << r.scale);
    CHECK(r.mean_share == 1.0);
    CHECK(r.var_share == 1.0);
  }
}

TEST_CASE("grad stats: table and errors", "[grad]") {
  StatsConfig c;
  c.norms = {"detachnorm"};
  c.H = 16;
  c.samples = 10;
  const std::string t = format_stats(gradient_stats(c), c);
  CHECK_THAT(t, Contains("detachnorm: DetachNorm") && Contains("| mean(∂ℓ/∂x)") && Contains("100.00%"));
  c.H = 1;
  CHECK_THROWS_WITH(gradient_stats(c), Contains("--H must be at least 2"));
  c.H = 16;
  c.samples = 0;
  CHECK_THROWS_WITH(gradient_stats(c), Contains("--samples"));
  c.samples = 10;
  c.norms = {"powernorm"};
  CHECK_THROWS_WITH(gradient_stats(c), Contains("unknown norm 'powernorm'"));
}

TEST_CASE("grad stats: AdaNorm's C is checked as train checks --C (no -nan tables)", "[grad]") {
  StatsConfig c;
  c.norms = {"adanorm"};
  c.H = 8;
  c.samples = 2;
  for (double bad : {std::nan(""), 0.0, -1.0}) {
    c.C = bad;
    CHECK_THROWS_WITH(gradient_stats(c), Contains("--C must be a finite number greater than 0"));
  }
}
