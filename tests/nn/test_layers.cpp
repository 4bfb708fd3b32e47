// Layers of src/nn: shapes, PyTorch-default init, and gradcheck of each layer with its parameters.
#include "nn_test_util.h"

using namespace nl;
using namespace nltest;
using Vs = std::vector<Variable>;

TEST_CASE("init: fans, gains and bounds as torch.nn.init", "[nn][init]") {
  Tensor w = Tensor::empty({8, 3, 5, 5});
  CHECK(init::fan_in_and_out(w) == std::pair<int64_t, int64_t>{75, 200});
  CHECK(init::fan_in_and_out(Tensor::empty({4, 6})) == std::pair<int64_t, int64_t>{6, 4});
  CHECK_THROWS_WITH(init::fan_in_and_out(Tensor::empty({4})), Catch::Contains("at least 2 dims"));
  CHECK(init::calculate_gain("relu") == Approx(std::sqrt(2.0)));
  CHECK(init::calculate_gain("tanh") == Approx(5.0 / 3.0));
  CHECK(init::calculate_gain("leaky_relu", std::sqrt(5.0)) == Approx(std::sqrt(1.0 / 3.0)));
  CHECK_THROWS_WITH(init::calculate_gain("swish"), Catch::Contains("valid:"));

  manual_seed(3);
  Tensor big = Tensor::empty({200, 300}, DType::Float64);
  auto range = [&]() {
    auto v = vals(big);
    return std::pair{*std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
  };
  auto stats = [&]() {
    auto v = vals(big);
    double m = 0, s = 0;
    for (double a : v) m += a;
    m /= v.size();
    for (double a : v) s += (a - m) * (a - m);
    return std::pair{m, std::sqrt(s / v.size())};
  };
  init::kaiming_uniform_(big, 0.0, "fan_in", "relu");  // b = sqrt(2) * sqrt(3/300)
  auto [lo, hi] = range();
  const double b = std::sqrt(2.0) * std::sqrt(3.0 / 300);
  CHECK(hi <= b);
  CHECK(lo >= -b);
  CHECK(hi > 0.99 * b);
  init::kaiming_normal_(big, 0.0, "fan_out", "relu");  // std = sqrt(2)/sqrt(200)
  CHECK(stats().second == Approx(std::sqrt(2.0 / 200)).epsilon(0.02));
  init::xavier_uniform_(big, 2.0);  // b = 2 sqrt(6/500)
  CHECK(range().second <= 2 * std::sqrt(6.0 / 500));
  CHECK(range().second > 0.99 * 2 * std::sqrt(6.0 / 500));
  init::xavier_normal_(big);  // std = sqrt(2/500)
  CHECK(stats().second == Approx(std::sqrt(2.0 / 500)).epsilon(0.02));
  init::normal_(big, 3.0, 0.5);
  CHECK(stats().first == Approx(3.0).epsilon(0.01));
  CHECK(stats().second == Approx(0.5).epsilon(0.02));
  init::uniform_(big, -2, -1);
  CHECK(range().first >= -2);
  CHECK(range().second < -1);
  init::ones_(big);
  CHECK(range() == std::pair{1.0, 1.0});
  init::zeros_(big);
  CHECK(range() == std::pair{0.0, 0.0});
  Tensor ints = Tensor::zeros({2, 2}, DType::Int64);
  CHECK_THROWS_AS(init::normal_(ints), std::invalid_argument);
}

TEST_CASE("init: under SkipInitGuard the initialisers write nothing and draw nothing, guards nest", "[nn][init]") {
  manual_seed(5);
  Tensor t = Tensor::full({3, 4}, 7.0);
  const auto before = rng_state();
  CHECK_FALSE(init::SkipInitGuard::active());
  {
    init::SkipInitGuard outer;
    {
      init::SkipInitGuard inner;
      init::normal_(t);
    }
    CHECK(init::SkipInitGuard::active());  // the inner guard gives the outer one's state back
    init::uniform_(t, -1, 1);
    init::kaiming_uniform_(t, std::sqrt(5.0));
    init::xavier_normal_(t);
    init::zeros_(t);
    Tensor ints = Tensor::zeros({2}, DType::Int64);
    CHECK_THROWS_AS(init::normal_(ints), std::invalid_argument);  // still checked
    Linear l(4, 3);  // a layer built under the guard: its blocks allocated, its weights not drawn
    CHECK(l.weight.data().shape() == Shape{3, 4});
  }
  CHECK_FALSE(init::SkipInitGuard::active());
  CHECK(rng_state() == before);
  for (double v : vals(t)) CHECK(v == 7.0);
  init::normal_(t);  // without the guard: drawn, and the generator moves on
  CHECK(rng_state() != before);
  CHECK(vals(t)[0] != 7.0);
}

TEST_CASE("Linear: PyTorch default init, shapes, gradcheck", "[nn][layers]") {
  manual_seed(1);
  Linear big(400, 50);
  const double b = 1.0 / std::sqrt(400.0);
  CHECK(max_abs(big.weight.data()) <= b);
  CHECK(max_abs(big.weight.data()) > 0.98 * b);
  CHECK(max_abs(big.bias.data()) <= b);
  CHECK(big.weight.shape() == Shape{50, 400});
  CHECK(big.num_parameters() == 400 * 50 + 50);

  Linear lin(4, 3, true, DType::Float64);
  Variable x = leaf({2, 5, 4});
  CHECK(lin(x).shape() == Shape{2, 5, 3});
  NL_GRADCHECK([&](const Vs& v) { return lin(v[0]); }, Vs{x, lin.weight, lin.bias});
  Linear nob(4, 3, false, DType::Float64);
  CHECK(!nob.bias.defined());
  CHECK(nob.named_parameters().size() == 1);
  NL_GRADCHECK([&](const Vs& v) { return nob(v[0]); }, Vs{x, nob.weight});
  CHECK_THROWS_WITH(lin(leaf({2, 5})), Catch::Contains("must end in 4"));
  CHECK_THROWS_AS(Linear(0, 3), std::invalid_argument);
}

TEST_CASE("Conv2d: PyTorch default init, output shape, gradcheck", "[nn][layers]") {
  manual_seed(2);
  Conv2d big(20, 50, 5);
  const double b = 1.0 / std::sqrt(20.0 * 25);
  CHECK(max_abs(big.weight.data()) <= b);
  CHECK(max_abs(big.weight.data()) > 0.98 * b);
  CHECK(max_abs(big.bias.data()) <= b);

  Conv2d conv(3, 4, 3, 2, 1, true, DType::Float64);
  Variable x = leaf({2, 7, 6, 3});  // NHWC storage: a non-contiguous NCHW view below
  auto f = [&](const Vs& v) { return conv(permute(v[0], {0, 3, 1, 2})); };
  CHECK(f({x}).shape() == Shape{2, 4, 4, 3});  // (7 + 2 - 3)/2 + 1 = 4, (6 + 2 - 3)/2 + 1 = 3
  NL_GRADCHECK(f, Vs{x, conv.weight, conv.bias});
  CHECK_THROWS_WITH(conv(leaf({1, 2, 5, 5})), Catch::Contains("[N, 3, H, W]"));
}

TEST_CASE("MaxPool2d, Flatten, activations, Identity", "[nn][layers]") {
  manual_seed(3);
  MaxPool2d pool(2);
  CHECK(pool.stride == 2);
  Variable x = leaf({2, 3, 6, 4});
  CHECK(pool(x).shape() == Shape{2, 3, 3, 2});
  NL_GRADCHECK([&](const Vs& v) { return pool(v[0]); }, Vs{x});
  Flatten fl;
  CHECK(fl(x).shape() == Shape{2, 72});
  CHECK(Flatten(0, 1)(x).shape() == Shape{6, 6, 4});
  Variable a = leaf({3, 4});
  CHECK(max_abs_diff(ReLU()(a).data(), relu(a).data()) == 0);
  CHECK(max_abs_diff(GELU()(a).data(), gelu(a).data()) == 0);
  CHECK(max_abs_diff(Tanh()(a).data(), tanh(a).data()) == 0);
  CHECK(Identity()(a).impl() == a.impl());
  NL_GRADCHECK([](const Vs& v) { return GELU()(Tanh()(ReLU()(v[0]))); }, Vs{a});
}

TEST_CASE("Dropout: train scales, eval is identity", "[nn][layers]") {
  Dropout d(0.25);
  Variable x(Tensor::ones({100, 100}, DType::Float64), true);
  manual_seed(5);
  auto v = vals(d(x).data());
  int kept = 0;
  for (double a : v) {
    CHECK((a == 0.0 || a == Approx(1 / 0.75)));
    kept += a != 0;
  }
  CHECK(kept / 1e4 == Approx(0.75).margin(0.02));
  d.eval();
  CHECK(d(x).impl() == x.impl());
  CHECK_THROWS_AS(Dropout(1.0), std::invalid_argument);
}

TEST_CASE("Embedding: N(0,1) init, padding row zero and without gradient, gradcheck", "[nn][layers]") {
  manual_seed(6);
  Embedding big(1000, 64, 3);
  auto w = vals(big.weight.data());
  double m = 0, s = 0;
  for (double a : w) m += a;
  m /= w.size();
  for (double a : w) s += (a - m) * (a - m);
  CHECK(std::sqrt(s / w.size()) == Approx(1.0).epsilon(0.02));
  for (int j = 0; j < 64; ++j) CHECK(w[3 * 64 + j] == 0.0);

  Embedding emb(5, 3, 0, DType::Float64);
  Tensor ids = Tensor::from_vector<int64_t>({1, 0, 4, 1, 1, 0}, {2, 3});
  Variable e = emb(ids);
  CHECK(e.shape() == Shape{2, 3, 3});
  NL_GRADCHECK([&](const Vs&) { return emb(ids); }, Vs{emb.weight});
  emb.zero_grad();
  e.backward(Tensor::ones(e.shape(), DType::Float64));
  auto g = vals(emb.weight.grad());
  for (int j = 0; j < 3; ++j) {
    CHECK(g[0 * 3 + j] == 0.0);  // padding row
    CHECK(g[1 * 3 + j] == 3.0);  // id 1 three times
    CHECK(g[4 * 3 + j] == 1.0);
  }
  CHECK_THROWS_AS(emb(Tensor::zeros({2}, DType::Float64)), std::invalid_argument);
  CHECK_THROWS_AS(Embedding(5, 3, 5), std::invalid_argument);
}

TEST_CASE("Sequential: chains children and gradchecks end to end", "[nn][layers]") {
  manual_seed(7);
  auto net = std::make_shared<Sequential>(std::initializer_list<std::shared_ptr<Module>>{
      std::make_shared<Linear>(6, 8, true, DType::Float64), std::make_shared<Tanh>(),
      make_norm("layernorm", 8, {{"dtype", "float64"}}), std::make_shared<Linear>(8, 3, true, DType::Float64)});
  CHECK(net->size() == 4);
  Variable x = leaf({5, 6});
  Variable y = (*net)(x);
  CHECK(y.shape() == Shape{5, 3});
  Vs in{x};
  for (auto& p : net->parameters()) in.push_back(p);
  NL_GRADCHECK([&](const Vs& v) { return (*net)(v[0]); }, in);
  Sequential empty;
  CHECK(empty(x).impl() == x.impl());
}
