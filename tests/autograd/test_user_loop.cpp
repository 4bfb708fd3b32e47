// Embedding normlab in one's own research code (issue 29, items 12 and 13): a training loop written as
// PyTorch users write one (no Tape::clear()) keeps the tape and the memory flat; constants on the tape
// print so that 1e-8 is visible; method-style ops spelled as torch.Tensor's; Sequential from a braced
// list of modules, and movable.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <fstream>

#include "normlab/normlab.h"

using namespace nl;
using Catch::Matchers::Contains;

namespace {
// Resident set size of this process in bytes (/proc/self/statm, second field).
int64_t rss_bytes() {
  std::ifstream f("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * (int64_t)sysconf(_SC_PAGESIZE);
}
}  // namespace

TEST_CASE("user loop: 10,000 hand-written steps keep the tape and RSS flat", "[autograd][tape][embedding]") {
  Tape::current().clear();
  manual_seed(3);
  // Linear regression y = x w*, fitted by plain gradient descent with method-style ops.
  const Tensor x = Tensor::randn({16, 4});
  const Tensor w_true = Tensor::from_vector<float>({1, -2, 0.5f, 3}, {4, 1});
  const Tensor y = nl::matmul(x, w_true);
  Variable w(Tensor::zeros({4, 1}), true, "w");
  double first_loss = 0, last_loss = 0;
  size_t max_entries = 0;
  int64_t rss_1000 = 0;
  for (int step = 0; step < 10000; ++step) {
    Variable loss = (Variable(x).matmul(w) - y).pow(2).mean();
    loss.backward();
    {
      NoGradGuard g;
      w.set_data(nl::sub(w.data(), nl::affine(w.grad(), 0.05, 0.0)));
    }
    w.zero_grad();
    if (step == 0) first_loss = loss.item();
    last_loss = loss.item();
    max_entries = std::max(max_entries, Tape::current().entries());
    if (step == 1000) rss_1000 = rss_bytes();
  }
  // The loop is a real one: the fit converges.
  CHECK(first_loss > 1.0);
  CHECK(last_loss < 1e-6);
  // Each step records 4 nodes that die with `loss`: the tape drops their entries as it records
  // (before the fix it kept a weak entry per op ever recorded, 4096 of them between compactions).
  CHECK(Tape::current().size() == 0);
  CHECK(max_entries <= 80);
  // No growth of the process between step 1,000 and step 10,000 (the allocator caches by size class).
  CHECK(rss_bytes() - rss_1000 < (int64_t)(1 << 20));
}

TEST_CASE("tape: constants print with their magnitude (an eps of 1e-8 is not 0.000000)", "[autograd][tape]") {
  Tape::current().clear();
  Variable x(Tensor::randn({2, 3}), true, "x");
  Variable y = affine(x, 0.5, 1e-8);
  Variable z = y.pow(2.5);
  const std::string dump = Tape::current().dump();
  CHECK_THAT(dump, Contains("Affine {a=0.5, b=1e-08}"));
  CHECK_THAT(dump, Contains("Pow {p=2.5}"));
}

TEST_CASE("Variable: method-style ops equal the free functions, values and gradients", "[autograd][embedding]") {
  manual_seed(5);
  const Tensor a0 = Tensor::rand({3, 4}).to(DType::Float64);
  Variable a(affine(a0, 1.0, 0.5), true, "a");  // positive: log and sqrt are defined
  Variable b(Tensor::randn({4, 2}).to(DType::Float64), true, "b");
  // x.pow(2).mean(-1, true), as PyTorch spells a layer-norm variance.
  Variable m1 = a.pow(2).mean(-1, true), m2 = mean(pow(a, 2), {-1}, true);
  CHECK(m1.shape() == Shape{3, 1});
  CHECK(m1.data().to_vector<double>() == m2.data().to_vector<double>());
  auto same = [](const Variable& p, const Variable& q) {
    REQUIRE(p.shape() == q.shape());
    CHECK(p.data().to_vector<double>() == q.data().to_vector<double>());
  };
  same(a.sum(), sum(a));
  same(a.sum(0), sum(a, {0}));
  same(a.sum({0, 1}, true), sum(a, {0, 1}, true));
  same(a.mean(), mean(a));
  same(a.exp(), exp(a));
  same(a.log(), log(a));
  same(a.sqrt(), sqrt(a));
  same(a.relu(), relu(a));
  same(a.reshape({4, 3}), reshape(a, {4, 3}));
  same(a.transpose(0, 1), transpose(a, 0, 1));
  same(a.matmul(b), matmul(a, b));
  Variable d = a.detach();
  CHECK(!d.requires_grad());
  // Gradients flow through the methods as through the free functions.
  (a.matmul(b).exp().sum() + a.sqrt().log().mean()).backward();
  const Tensor ga = a.grad().clone(), gb = b.grad().clone();
  a.zero_grad();
  b.zero_grad();
  (sum(exp(matmul(a, b))) + mean(log(sqrt(a)))).backward();
  CHECK(ga.to_vector<double>() == a.grad().to_vector<double>());
  CHECK(gb.to_vector<double>() == b.grad().to_vector<double>());
}

namespace {
Sequential make_mlp() {
  Sequential net{Linear(4, 8), ReLU(), std::make_shared<Linear>(8, 2)};
  return net;  // needs Sequential's move
}
}  // namespace

TEST_CASE("Sequential: a braced list of modules, moved in and out", "[nn][embedding]") {
  manual_seed(7);
  Sequential net = make_mlp();
  REQUIRE(net.size() == 3);
  CHECK(net[0]->str() == "Linear(in=4, out=8, bias=true)");
  CHECK(net.named_parameters().size() == 4);
  CHECK(net.named_parameters()[0].first == "0.weight");
  CHECK(net.named_parameters()[3].first == "2.bias");
  Variable x(Tensor::randn({5, 4}));
  const auto y0 = net(x).data().to_vector<float>();
  Sequential moved = std::move(net);
  CHECK(moved(x).data().to_vector<float>() == y0);  // same parameters after the move
  CHECK(moved.parameters().size() == 4);
  // Shared modules and a norm from the factory in one list.
  Sequential with_norm{std::make_shared<Linear>(4, 4), make_norm("layernorm", 4)};
  CHECK(with_norm(x).shape() == Shape{5, 4});
}
