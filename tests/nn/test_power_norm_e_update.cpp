// PowerNorm's E statistic (ema_gz) is a module buffer updated by the module (issue 10): the backward
// computes the new E, and the module writes it into its buffer after the whole backward pass, bumping
// the buffer's version once; nodes that run later in the same pass still see the old buffer. The
// three-step hand computation and the resume tests of test_power_norm.cpp check the values.
#include "autograd/post_backward.h"
#include "nn_test_util.h"

using namespace nl;
using namespace nltest;
using Catch::Matchers::Contains;

namespace {
std::shared_ptr<PowerNorm> small_pn() {
  auto m = std::dynamic_pointer_cast<PowerNorm>(
      make_norm("powernorm", 2, {{"dtype", "float64"}, {"layer_scale", false}, {"warmup_iters", 1}}));
  REQUIRE(m);
  return m;
}
}  // namespace

TEST_CASE("powernorm: E changes only after the backward pass, with one version bump", "[nn][norm][powernorm]") {
  auto m = small_pn();
  manual_seed(3);
  Variable x(Tensor::randn({4, 2}, 0.0, 1.0, DType::Float64), true);
  const Tensor E = m->buffer("ema_gz");
  const uint64_t v0 = E.version();
  const std::vector<double> before = vals(E.clone());
  // A node upstream of PN (its backward runs after PN's) records what it sees of the buffer.
  std::vector<double> seen_in_pass;
  uint64_t version_in_pass = 0;
  Variable pre = make_result(x.data().clone(), "Spy", {x}, [&](const Tensor& g, const std::vector<bool>&) {
    seen_in_pass = vals(m->buffer("ema_gz").clone());
    version_in_pass = m->buffer("ema_gz").version();
    return std::vector<Tensor>{g};
  });
  Variable y = m->forward(pre);
  CHECK(vals(m->buffer("ema_gz")) == before);  // forward does not touch E
  y.backward(Tensor::randn({4, 2}, 0.0, 1.0, DType::Float64));
  CHECK(seen_in_pass == before);  // PN's node had run, but the buffer was not written during the pass
  CHECK(version_in_pass == v0);
  CHECK(vals(m->buffer("ema_gz")) != before);  // applied after the pass
  CHECK(m->buffer("ema_gz").version() == v0 + 1);
  CHECK_FALSE(in_backward_pass());
}

TEST_CASE("powernorm: a second backward through a retained graph is refused (E changed)", "[nn][norm][powernorm]") {
  auto m = small_pn();
  Variable x(Tensor::randn({4, 2}, 0.0, 1.0, DType::Float64), true);
  Variable loss = sum(square(m->forward(x)));
  loss.backward(Tensor(), /*retain_graph=*/true);
  CHECK_THROWS_WITH(loss.backward(), Contains("E buffer") && Contains("modified in place"));
}

TEST_CASE("powernorm: a graph that outlives its module still backpropagates", "[nn][norm][powernorm]") {
  Variable x(Tensor::randn({4, 2}, 0.0, 1.0, DType::Float64), true);
  Variable y;
  {
    auto m = small_pn();
    y = m->forward(x);
  }
  sum(y).backward();  // the E update has no module to go to and is dropped
  REQUIRE(x.grad().defined());
  for (double g : vals(x.grad())) CHECK(std::isfinite(g));
}

TEST_CASE("powernorm: power_norm_fused needs the module's update slot", "[nn][norm][powernorm]") {
  Variable x(Tensor::randn({3, 2}, 0.0, 1.0, DType::Float64), true);
  const Tensor s = Tensor::ones({2}, DType::Float64);
  CHECK_THROWS_WITH(power_norm_fused(x, s, s, Tensor::zeros({2}, DType::Float64), 0.9, nullptr),
                    Contains("`update` is null"));
}
