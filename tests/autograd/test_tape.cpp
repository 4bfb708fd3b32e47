// The tape: recording, the first-class Detach node, NoGradGuard, version counters, retain_graph,
// deep graphs, and a few op gradients checked against finite differences in float64.
#include <catch2/catch.hpp>

#include "autograd/functions.h"
#include "autograd/gradcheck.h"

using namespace nl;
using Catch::Matchers::Contains;

static Variable leaf64(const std::vector<double>& v, const Shape& s, const char* name = "") {
  return Variable(Tensor::from_vector(v, s), true, name);
}

TEST_CASE("autograd: simple chain rule by hand", "[autograd]") {
  Variable x = leaf64({1, 2, 3}, {3}, "x");
  Variable y = sum(mul(x, x) * 3.0);  // dy/dx = 6x
  y.backward();
  CHECK(x.grad().to_vector<double>() == std::vector<double>{6, 12, 18});
  // Gradients accumulate across backward calls until zero_grad.
  sum(x).backward();
  CHECK(x.grad().to_vector<double>() == std::vector<double>{7, 13, 19});
  x.zero_grad();
  CHECK(!x.grad().defined());
}

TEST_CASE("autograd: detach is a node on the tape and stops gradient", "[autograd][detach]") {
  Tape::current().clear();
  Variable x = leaf64({1, 2, 4}, {3}, "x");
  Variable m = mean(x, {0}, true);
  Variable md = detach(m);
  Variable y = sub(x, md);
  std::string dump = Tape::current().dump();
  CHECK_THAT(dump, Contains("Detach"));
  CHECK_THAT(dump, Contains("[detach: gradient stops here]"));
  CHECK_THAT(dump, Contains("(detached)"));
  CHECK_THAT(dump, Contains("<- x"));
  CHECK(!md.requires_grad());
  sum(mul(y, y)).backward();
  // With the mean detached: d/dx sum((x - c)^2) = 2 (x - c), c = 7/3 held constant.
  auto g = x.grad().to_vector<double>();
  CHECK(g[0] == Approx(2 * (1 - 7.0 / 3)));
  CHECK(g[2] == Approx(2 * (4 - 7.0 / 3)));
  // Without detach the centred gradient sums to zero instead.
  Variable x2 = leaf64({1, 2, 4}, {3});
  Variable y2 = sub(x2, mean(x2, {0}, true));
  sum(mul(y2, y2)).backward();
  auto g2 = x2.grad().to_vector<double>();
  CHECK(g2[0] + g2[1] + g2[2] == Approx(0).margin(1e-12));
  CHECK(g2[0] == Approx(g[0]));  // sum of centred values is 0, so the mean term cancels here
}

TEST_CASE("autograd: NoGradGuard records nothing", "[autograd]") {
  Tape::current().clear();
  Variable x = leaf64({1, 2}, {2});
  {
    NoGradGuard g;
    Variable y = exp(x) * 2.0;
    CHECK(!y.requires_grad());
    CHECK(Tape::current().size() == 0);
  }
  Variable z = exp(x);
  CHECK(z.requires_grad());
  CHECK(Tape::current().size() == 1);
}

TEST_CASE("autograd: in-place change of a saved tensor is an error naming the node", "[autograd]") {
  Variable x = leaf64({1, 2, 3}, {3});
  Tensor w = Tensor::from_vector<double>({1, 1, 1}, {3});
  Variable y = sum(mul(x, Variable(w)));
  w.fill_(5);
  CHECK_THROWS_WITH(y.backward(), Contains("'Mul'") && Contains("modified in place") && Contains("[3]") &&
                                      Contains("version 0 when saved, 1 now"));
}

TEST_CASE("autograd: backward twice needs retain_graph", "[autograd]") {
  Variable x = leaf64({1, 2}, {2});
  Variable y = sum(exp(x));
  y.backward({}, true);
  y.backward();  // allowed: the first pass retained the graph
  CHECK(x.grad().to_vector<double>()[0] == Approx(2 * std::exp(1.0)));
  CHECK_THROWS_WITH(y.backward(), Contains("a second time") && Contains("retain_graph"));
}

TEST_CASE("autograd: a long chain neither overflows the stack in backward nor in teardown", "[autograd]") {
  Variable x = leaf64({0.5}, {1});
  {
    Variable y = x;
    for (int i = 0; i < 10000; ++i) y = affine(y, 1.0, 0.001);
    sum(y).backward();
    CHECK(x.grad().item() == 1.0);
    CHECK(y.item() == Approx(10.5));
  }
  // Teardown of a graph that was never differentiated: 500,000 nodes destroyed when y goes away
  // (nested destructors would need far more than the default 8 MiB stack).
  {
    Variable y = x;
    for (int i = 0; i < 500000; ++i) y = affine(y, 1.0, 0.0);
    CHECK(y.item() == 0.5);
  }
  CHECK(Tape::current().size() == 0);
}

TEST_CASE("autograd: errors for bad backward calls", "[autograd]") {
  Variable x = leaf64({1, 2}, {2});
  CHECK_THROWS_WITH(exp(x).backward(), Contains("non-scalar"));
  Variable c(Tensor::ones({1}));
  CHECK_THROWS_WITH(c.backward(), Contains("does not require grad"));
  CHECK_THROWS_WITH(Variable(Tensor::zeros({2}, DType::Int64), true), Contains("only float tensors"));
}

TEST_CASE("gradcheck: elementwise, broadcasting and views in float64", "[autograd][gradcheck]") {
  manual_seed(3);
  auto a = Variable(Tensor::randn({2, 3}, 0, 1, DType::Float64), true);
  auto b = Variable(Tensor::rand({3}, 0.5, 2.0, DType::Float64), true);
  auto check = [](auto f, std::vector<Variable> in) {
    auto r = gradcheck(f, in);
    INFO(r.report);
    CHECK(r.ok);
  };
  check([](auto& v) { return add(v[0], v[1]); }, {a, b});
  check([](auto& v) { return mul(v[0], v[1]); }, {a, b});
  check([](auto& v) { return div(v[0], v[1]); }, {a, b});
  check([](auto& v) { return sub(transpose(v[0], 0, 1), unsqueeze(v[1], 1)); }, {a, b});
  check([](auto& v) { return tanh(v[0]) + sigmoid(v[0]) * gelu(v[0]); }, {a});
  check([](auto& v) { return sqrt(v[0]) + rsqrt(v[0]) + log(v[0]) + pow(v[0], 1.7); }, {b});
  check([](auto& v) { return sum(square(v[0]), {1}) + mean(v[0], {1}); }, {a});
  check([](auto& v) { return var(v[0], {1}, 1, true) + var(v[0], {1}, 0, true); }, {a});
  check([](auto& v) { return max(v[0], 1); }, {a});
  check([](auto& v) { return matmul(v[0], unsqueeze(v[1], 1)); }, {a, b});
  check([](auto& v) { return cat({v[0], unsqueeze(v[1], 0)}, 0); }, {a, b});
  check([](auto& v) { return slice(permute(v[0], {1, 0}), 0, 1, 3); }, {a});
  check([](auto& v) { return expand(unsqueeze(v[1], 0), {4, 3}); }, {a, b});
  check([](auto& v) { return softmax(v[0], 0) + log_softmax(v[0], 1); }, {a});
  check([](auto& v) { return where(gt(v[0].data(), 0.0), v[0], exp(v[0])); }, {a});
  Tensor idx = Tensor::from_vector<int64_t>({1, 1, 0, 1, 0, 0, 1, 1, 1}, {3, 3});  // repeats accumulate
  check([idx](auto& v) { return gather(v[0], 0, idx); }, {a});
  check([idx](auto& v) { return gather(transpose(v[0], 0, 1), 1, idx.slice(1, 0, 2)); }, {a});
}

TEST_CASE("autograd: retain_grad keeps a non-leaf's gradient", "[autograd]") {
  Variable x = leaf64({1, 2, 3}, {3});
  Variable h = mul(x, x);  // h = x^2
  h.retain_grad();
  Variable y = sum(affine(h, 3.0, 0.0));  // dy/dh = 3
  y.backward();
  CHECK(h.grad().to_vector<double>() == std::vector<double>{3, 3, 3});
  CHECK(x.grad().to_vector<double>() == std::vector<double>{6, 12, 18});
  Variable h2 = mul(x, x);
  sum(h2).backward();
  CHECK(!h2.grad().defined());  // not asked for: not kept
}
