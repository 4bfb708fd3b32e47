// The backward engine: dependency order across threads, gradients that share no storage, and the
// implicit Tensor -> Variable conversion.
#include <catch2/catch.hpp>

#include <thread>

#include "autograd/functions.h"
#include "autograd/tape.h"
#include "tensor/ops_nn.h"

using namespace nl;
using Catch::Matchers::Contains;

static Variable leaf64(const std::vector<double>& v, const Shape& s, const char* name = "") {
  return Variable(Tensor::from_vector(v, s), true, name);
}

TEST_CASE("engine: a graph recorded on several threads gets the right gradients", "[autograd][engine]") {
  Variable a = leaf64({1, 2}, {2}, "a"), b = leaf64({3, 4}, {2}, "b");
  Variable r1, s, r2;
  // Two threads record at the same time, both using leaf a: one a long chain (ids 0..49 on its
  // tape), the other one product.
  std::thread t1([&] {
    Variable r = a;
    for (int i = 0; i < 50; ++i) r = affine(r, 1.0, 0.1);  // r1 = a + 5
    r1 = r;
  });
  std::thread t2([&] { s = mul(a, b); });
  t1.join();
  t2.join();
  // A third thread consumes the chain's end with a node of id 0 on its own tape, lower than the ids
  // of the nodes that produced its input.
  std::thread t3([&] { r2 = mul(r1, b); });
  t3.join();
  Variable y = add(add(sum(r2), sum(r1)), sum(s));  // sum((a + 5) b) + sum(a + 5) + sum(a b)
  y.backward();
  CHECK(a.grad().to_vector<double>() == std::vector<double>{7, 9});  // 2b + 1
  auto gb = b.grad().to_vector<double>();                            // 2a + 5 (0.1 x 50 is inexact)
  CHECK(gb[0] == Approx(7));
  CHECK(gb[1] == Approx(9));
}

TEST_CASE("engine: a node runs only after all its consumers, whatever the ids", "[autograd][engine]") {
  // A diamond whose branches have very different depths: the short branch's gradient must wait.
  Variable x = leaf64({2}, {1}, "x");
  Variable h = mul(x, x);  // h = x^2
  Variable deep = h;
  for (int i = 0; i < 20; ++i) deep = affine(deep, 1.0, 0.0);
  Variable y = sum(add(mul(h, h), deep));  // y = x^4 + x^2
  y.backward();
  CHECK(x.grad().item() == Approx(4 * 8 + 2 * 2));
}

TEST_CASE("engine: leaf gradients never share storage with each other or with the given gradient",
          "[autograd][engine]") {
  Variable a = leaf64({1, 2}, {2}, "a"), b = leaf64({3, 4}, {2}, "b");
  Tensor g = Tensor::from_vector<double>({1, 10}, {2});
  Variable y = add(a, b);  // Add hands the very same tensor to both inputs
  y.backward(g);
  REQUIRE(a.grad().defined());
  CHECK_FALSE(a.grad().is_alias_of(b.grad()));
  CHECK_FALSE(a.grad().is_alias_of(g));
  CHECK_FALSE(b.grad().is_alias_of(g));
  Tensor ga = a.grad();
  ga.fill_(-1);  // an in-place change of one gradient (as an optimizer or clipping might do) ...
  CHECK(b.grad().to_vector<double>() == std::vector<double>{1, 10});  // ... changes no other
  CHECK(g.to_vector<double>() == std::vector<double>{1, 10});

  SECTION("a leaf used twice") {
    Variable x = leaf64({1, 2}, {2}, "x");
    Tensor gx = Tensor::from_vector<double>({1, 1}, {2});
    add(x, x).backward(gx);
    CHECK(x.grad().to_vector<double>() == std::vector<double>{2, 2});
    CHECK_FALSE(x.grad().is_alias_of(gx));
  }
  SECTION("a retained non-leaf gradient and a leaf gradient") {
    Variable h = affine(a, 1.0, 0.0);
    h.retain_grad();
    Variable z = add(h, b);
    a.zero_grad();
    b.zero_grad();
    z.backward(g);
    CHECK_FALSE(h.grad().is_alias_of(b.grad()));
    CHECK_FALSE(h.grad().is_alias_of(g));
    CHECK_FALSE(a.grad().is_alias_of(h.grad()));
  }
  SECTION("backward of a leaf itself") {
    Variable x = leaf64({1, 2}, {2}, "x");
    x.backward(g);
    CHECK_FALSE(x.grad().is_alias_of(g));
  }
}

TEST_CASE("engine: gradients summed in place change no tensor anyone else holds", "[autograd][engine]") {
  // h gets two gradients: one a tensor that the test and a backward closure hold (never summed into in
  // place), one made by Affine's backward (the engine's alone: summed into in place). Either order of arrival.
  for (bool const_first : {false, true}) {
    INFO("const_first " << const_first);
    Tensor c = Tensor::from_vector<double>({2, 2, 2}, {3});
    Variable x = leaf64({1, 2, 3}, {3}, "x");
    Variable h = affine(x, 1.0, 0.0);
    auto constant = [&c](const Variable& in) {
      return make_result(in.data().clone(), "ConstGrad", {in},
                         [c](const Tensor&, const std::vector<bool>&) { return std::vector<Tensor>{c}; },
                         {saved(c, "the gradient it returns")});
    };
    Variable y = const_first ? add(affine(h, 3.0, 0.0), constant(h)) : add(constant(h), affine(h, 3.0, 0.0));
    sum(y).backward();
    CHECK(x.grad().to_vector<double>() == std::vector<double>{5, 5, 5});
    CHECK(c.to_vector<double>() == std::vector<double>{2, 2, 2});
  }
  // A non-leaf used many times: the sums (in place after the first) give the exact gradient.
  Variable x = leaf64({1, -2, 0.5}, {3}, "x");
  Variable h = affine(x, 2.0, 0.0), y = h;
  for (int i = 0; i < 5; ++i) y = add(y, affine(h, (double)i, 0.0));
  sum(y).backward();
  CHECK(x.grad().to_vector<double>() == std::vector<double>{22, 22, 22});  // 2 * (1 + 0 + 1 + 2 + 3 + 4)
}

TEST_CASE("Variable: a Tensor converts implicitly to a Variable without requires_grad", "[autograd]") {
  auto wants = [](const Variable& v) { return v.requires_grad(); };
  CHECK_FALSE(wants(Tensor::ones({2})));
  Variable x = leaf64({1, 2}, {2}, "x");
  Tensor w = Tensor::from_vector<double>({3, 5}, {2});
  Variable y = sum(mul(x, w));  // Variable x Tensor: the Variable overload, w held constant
  y.backward();
  CHECK(x.grad().to_vector<double>() == std::vector<double>{3, 5});
  Variable c = Tensor::zeros({3});  // copy-initialisation works too
  CHECK(c.is_leaf());
  CHECK_FALSE(c.requires_grad());
  // Tensor x Tensor still picks the Tensor overload and returns a Tensor.
  Tensor t = mul(w, w);
  CHECK(t.to_vector<double>() == std::vector<double>{9, 25});
}

TEST_CASE("engine: LayerNorm adds its dx into the gradient its input already has, with the same bits",
          "[autograd][engine]") {
  // A pre-norm residual block y = x + w ⊙ LN(x), x an op's output. The engine hands LayerNorm's backward
  // the residual branch's gradient of x (accumulated_gradient) and LayerNorm adds dx into it in its own
  // pass; the reference routes LN's input through x·1 (exact), so the engine adds the two gradients itself.
  manual_seed(5);
  for (int64_t H : {37, 128}) {
    const Tensor x0v = Tensor::randn({64, H}), wv = Tensor::randn({H}), cv = Tensor::randn({64, H});
    auto grad_of_x0 = [&](bool through_copy) {
      Variable x0(x0v, true, "x0"), w(wv, true, "w");
      Variable x = affine(x0, 2.0, 0.5);
      Variable ln_in = through_copy ? affine(x, 1.0, 0.0) : x;
      Variable y = add(x, mul(layer_norm_fused(ln_in, LayerNormOptions{}), w));
      sum(mul(y, Variable(cv))).backward();
      return std::make_pair(x0.grad().to_vector<float>(), w.grad().to_vector<float>());
    };
    const auto fused = grad_of_x0(false), ref = grad_of_x0(true);
    INFO("H = " << H);
    CHECK(fused.first == ref.first);   // bitwise: the one float addition either way
    CHECK(fused.second == ref.second);
  }
}

TEST_CASE("layer_norm_backward: accumulate_into adds dx in the kernel's pass, the bits of a separate add",
          "[norm][engine]") {
  manual_seed(6);
  for (DType t : {DType::Float32, DType::Float64})
    for (int64_t H : {37, 128}) {
      const Tensor x = Tensor::randn({50, H}).to(t), gy = Tensor::randn({50, H}).to(t), w = Tensor::randn({H}).to(t);
      const LayerNormResult r = layer_norm(x, w, Tensor(), LayerNormOptions{});
      const Tensor before = Tensor::randn({50, H}).to(t);
      const Tensor plain = layer_norm_backward(gy, x, r.mean, r.rstd, w, LayerNormOptions{}, false, false).x;
      const Tensor acc = before.clone();
      const Tensor got = layer_norm_backward(gy, x, r.mean, r.rstd, w, LayerNormOptions{}, false, false, acc).x;
      INFO(dtype_name(t) << ", H = " << H);
      CHECK(got.storage() == acc.storage());  // written into the given buffer
      const Tensor want = add(before, plain);
      CHECK(got.to(DType::Float64).to_vector<double>() == want.to(DType::Float64).to_vector<double>());
      // a buffer of another shape is not used
      const Tensor other = Tensor::zeros({50 * H});
      CHECK(layer_norm_backward(gy, x, r.mean, r.rstd, w, LayerNormOptions{}, false, false, other).x.storage() !=
            other.storage());
    }
}
