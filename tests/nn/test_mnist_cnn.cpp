// The MNIST CNN of Xu et al. 2019 A.3 is PyTorch's MNIST example network: ReLU after each convolution
// (conv_relu, the default), the norm before the hidden ReLU. Checked against the same network written
// out with functional ops on the module's own parameters; conv_relu = false drops the two ReLUs.
#include <catch2/catch.hpp>

#include <map>

#include "autograd/functions.h"
#include "nn/models/mnist_cnn.h"

using namespace nl;

namespace {
// The network by hand: `norm` is the module's norm (layernorm-simple here: no parameters of its own).
Variable by_hand(MnistCnn& m, const Variable& x, bool conv_relu) {
  std::map<std::string, Variable> p;
  for (auto& [k, v] : m.named_parameters()) p[k] = v;
  auto act = [&](const Variable& v) { return conv_relu ? relu(v) : v; };
  Variable h = max_pool2d(act(conv2d(x, p["conv1.weight"], p["conv1.bias"])), 2);
  h = max_pool2d(act(conv2d(h, p["conv2.weight"], p["conv2.bias"])), 2);
  h = linear(flatten(h, 1), p["fc1.weight"], p["fc1.bias"]);
  Variable mu = mean(h, {-1}, true);
  Variable c = h - mu;
  h = c / sqrt(affine(mean(c * c, {-1}, true), 1.0, 1e-5));
  return linear(relu(h), p["fc2.weight"], p["fc2.bias"]);
}
}  // namespace

TEST_CASE("mnist cnn: PyTorch's example network, with and without the conv ReLUs", "[nn][mnist]") {
  for (bool conv_relu : {true, false}) {
    manual_seed(5);
    MnistCnnConfig cfg;
    cfg.norm = "layernorm-simple";
    cfg.conv_relu = conv_relu;
    MnistCnn m(cfg);
    Variable x(Tensor::randn({3, 1, 28, 28}));
    const auto got = m(x).data().to_vector<double>(), want = by_hand(m, x, conv_relu).data().to_vector<double>();
    REQUIRE(got.size() == 30);
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-4));
    // The other reading gives other logits: the ReLUs are really there (or not).
    const auto other = by_hand(m, x, !conv_relu).data().to_vector<double>();
    double diff = 0;
    for (size_t i = 0; i < got.size(); ++i) diff += std::abs(got[i] - other[i]);
    CHECK(diff > 1e-2);
  }
}
