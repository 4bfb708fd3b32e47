// LN-Net (Ni et al. 2024): shapes and parameter layout, the linear baselines are affine maps, the
// LN-Net and LN-G are not, and bad configurations fail with clear errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "autograd/functions.h"
#include "nn/models/ln_net.h"

using namespace nl;
using Catch::Matchers::Contains;

namespace {
// max |f((x + y) / 2) - (f(x) + f(y)) / 2| over a batch: 0 for an affine f.
double midpoint_defect(LnNet& net, const Tensor& x, const Tensor& y) {
  NoGradGuard ng;
  const Tensor mid = mul(add(x, y), Tensor::scalar(0.5));
  const Tensor lhs = net(Variable(mid)).data();
  const Tensor rhs = mul(add(net(Variable(x)).data(), net(Variable(y)).data()), Tensor::scalar(0.5));
  double m = 0;
  for (double v : abs(sub(lhs, rhs)).to_vector<double>()) m = std::max(m, v);
  return m;
}
LnNetConfig cfg(const std::string& norm, int64_t depth, nlohmann::json opts = {}) {
  LnNetConfig c;
  c.in = 12;
  c.width = 8;
  c.depth = depth;
  c.norm = norm;
  c.norm_opts = std::move(opts);
  return c;
}
}  // namespace

TEST_CASE("LnNet: layout and output shape", "[lnnet][nn]") {
  manual_seed(1);
  LnNet net(cfg("layernorm", 3));
  std::set<std::string> p;
  for (const auto& [name, v] : net.named_parameters()) p.insert(name);
  CHECK(p.count("fc0.weight"));
  CHECK(p.count("norm2.weight"));
  CHECK(p.count("out.weight"));
  CHECK(net.norms().size() == 3);
  CHECK(net(Variable(Tensor::randn({5, 3, 2, 2}))).shape() == Shape{5, 10});  // images are flattened
  LnNet lin(cfg("none", 0));
  CHECK(lin.named_parameters().size() == 2);  // one Linear: the linear classifier
}

TEST_CASE("LnNet: linear baselines are affine, LN and LN-G nets are not", "[lnnet][nn]") {
  manual_seed(2);
  const Tensor x = Tensor::randn({16, 12}), y = Tensor::randn({16, 12});
  LnNet classifier(cfg("none", 0)), linear(cfg("none", 4)), ln(cfg("layernorm", 4)), lng(cfg("lng", 4, {{"groups", 2}}));
  CHECK(midpoint_defect(classifier, x, y) < 1e-5);
  CHECK(midpoint_defect(linear, x, y) < 1e-5);
  CHECK(midpoint_defect(ln, x, y) > 1e-2);
  CHECK(midpoint_defect(lng, x, y) > 1e-2);
}

TEST_CASE("LnNet: bad configurations and inputs", "[lnnet][nn]") {
  REQUIRE_THROWS_WITH(LnNet(cfg("lng", 2, {{"groups", 3}})), Contains("3") && Contains("8"));
  REQUIRE_THROWS_WITH(LnNet(cfg("none", -1)), Contains("depth >= 0"));
  REQUIRE_THROWS_WITH(LnNet(cfg("nonorm", 1)), Contains("unknown norm"));
  LnNet net(cfg("layernorm", 1));
  REQUIRE_THROWS_WITH(net(Variable(Tensor::randn({2, 13}))), Contains("13 features") && Contains("built for 12"));
}
