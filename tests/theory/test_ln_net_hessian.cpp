// The Hessian measure of an LN-Net (nn/theory/ln_net_hessian.h, the capacity figure's panels c-d):
// it equals the closed form at each norm's input computed by hand, is 0 for the linear network, and
// refuses a norm without a closed form.
#include <catch2/catch.hpp>

#include "autograd/functions.h"
#include "nn/theory/ln_hessian.h"
#include "nn/theory/ln_net_hessian.h"

using namespace nl;
using Catch::Matchers::Contains;

namespace {
LnNetConfig cfg(const std::string& norm, nlohmann::json opts = nullptr) {
  LnNetConfig c;
  c.in = 5;
  c.width = 8;
  c.depth = 2;
  c.classes = 3;
  c.norm = norm;
  c.norm_opts = std::move(opts);
  return c;
}
}  // namespace

TEST_CASE("ln_net_hessian: the mean over samples of the closed form at every norm's input", "[theory][hessian]") {
  manual_seed(4);
  LnNet net(cfg("lng", {{"groups", 2}}));
  // a non-trivial gain on the second norm
  Tensor w = net.norms()[1]->param("weight").data();
  w.copy_(Tensor::rand({8}, 0.5, 1.5));
  const Tensor x = Tensor::randn({3, 5});
  const auto h = lntheory::ln_net_hessian(net, x);
  REQUIRE(h.per_layer.size() == 2);
  CHECK(h.samples == 3);
  // by hand: the inputs of the norms are fc0(x) and fc1(norm0(fc0(x)))
  std::vector<Variable> ins;
  int handle = net.norms()[1]->register_forward_hook(
      [&](Module&, const std::vector<Variable>& in, const Variable&) { ins.push_back(in[0]); });
  net.eval();
  net(Variable(x));
  net.norms()[1]->remove_forward_hook(handle);
  const auto in1 = ins.at(0).data().to_vector<double>();
  const auto gain = w.to_vector<double>();
  double want = 0;
  for (int b = 0; b < 3; ++b)
    want += lntheory::lng_hessian_closed(std::vector<double>(in1.begin() + b * 8, in1.begin() + (b + 1) * 8), 2, 1e-5,
                                         gain) / 3;
  CHECK(h.per_layer[1] == Approx(want).epsilon(1e-12));
  CHECK(h.total == Approx(h.per_layer[0] + h.per_layer[1]).epsilon(1e-12));
  CHECK(h.per_layer[0] > 0);
}

TEST_CASE("ln_net_hessian: 0 for the linear network, LN for layernorm", "[theory][hessian]") {
  manual_seed(6);
  const Tensor x = Tensor::randn({4, 5});
  LnNet lin(cfg("none"));
  CHECK(lntheory::ln_net_hessian(lin, x).total == 0);
  LnNet ln(cfg("layernorm")), g1(cfg("lng", {{"groups", 1}}));
  g1.load_state_dict(ln.state_dict());
  CHECK(lntheory::ln_net_hessian(ln, x).total == Approx(lntheory::ln_net_hessian(g1, x).total).epsilon(1e-12));
  CHECK(ln.is_training());
}

TEST_CASE("ln_net_hessian: clear errors", "[theory][hessian]") {
  LnNet bn(cfg("batchnorm"));
  CHECK_THROWS_WITH(lntheory::ln_net_hessian(bn, Tensor::randn({4, 5})),
                    Contains("covers --norm none and the norms that are LayerNorm per feature group "
                             "(layernorm, lng, groupnorm), not 'batchnorm'"));
  LnNet ln(cfg("layernorm"));
  CHECK_THROWS_WITH(lntheory::ln_net_hessian(ln, Tensor::zeros({0, 5})), Contains("empty"));
}
