// gradcheck (float64, central differences) of every autograd op src/nn uses, including broadcasting
// and non-contiguous views.
#include "autograd/memory.h"
#include "nn/transformer/config.h"
#include "nn_test_util.h"

using namespace nl;
using namespace nltest;
using Vs = std::vector<Variable>;

TEST_CASE("ops gradcheck: linear, matmul", "[nn][gradcheck]") {
  manual_seed(1);
  Vs in{leaf({3, 2, 4}), leaf({5, 4}), leaf({5})};
  NL_GRADCHECK([](const Vs& v) { return linear(v[0], v[1], v[2]); }, in);
  NL_GRADCHECK([](const Vs& v) { return linear(v[0], v[1], Variable()); }, Vs({in[0], in[1]}));
  Vs mm{leaf({2, 3, 4}), leaf({4, 5})};
  NL_GRADCHECK([](const Vs& v) { return matmul(v[0], v[1]); }, mm);
  Vs bmm{leaf({2, 3, 4}), leaf({2, 5, 4})};  // second operand transposed: a non-contiguous view
  NL_GRADCHECK([](const Vs& v) { return matmul(v[0], transpose(v[1], 1, 2)); }, bmm);
}

TEST_CASE("ops gradcheck: conv2d with stride, padding and a non-contiguous input", "[nn][gradcheck]") {
  manual_seed(2);
  // x is stored NHWC and permuted to NCHW inside f, so conv2d sees a non-contiguous view.
  Vs in{leaf({2, 6, 5, 3}), leaf({4, 3, 3, 3}), leaf({4})};
  for (auto [s, p] : std::vector<std::pair<int, int>>{{1, 0}, {2, 1}, {2, 0}, {1, 2}}) {
    INFO("stride " << s << " padding " << p);
    NL_GRADCHECK([s = s, p = p](const Vs& v) { return conv2d(permute(v[0], {0, 3, 1, 2}), v[1], v[2], s, p); }, in);
  }
  NL_GRADCHECK([](const Vs& v) { return conv2d(permute(v[0], {0, 3, 1, 2}), v[1], Variable(), 2, 1); },
               Vs({in[0], in[1]}));
  // Forward against a hand computation: 1x1 input channel, 2x2 ones kernel, stride 1, padding 1.
  Variable x(Tensor::from_vector<double>({1, 2, 3, 4}, {1, 1, 2, 2}));
  Variable w(Tensor::ones({1, 1, 2, 2}, DType::Float64));
  CHECK(vals(conv2d(x, w, Variable(), 1, 1).data()) == std::vector<double>{1, 3, 2, 4, 10, 6, 3, 7, 4});
}

TEST_CASE("ops gradcheck: max_pool2d", "[nn][gradcheck]") {
  manual_seed(3);
  Vs in{leaf({2, 3, 6, 5})};
  NL_GRADCHECK([](const Vs& v) { return max_pool2d(v[0], 2); }, in);
  NL_GRADCHECK([](const Vs& v) { return max_pool2d(v[0], 3, 2, 1); }, in);  // overlapping windows
  NL_GRADCHECK([](const Vs& v) { return max_pool2d(transpose(v[0], 2, 3), 2, 1); }, in);
  Variable x(Tensor::from_vector<double>({1, 5, 2, 0, 3, 4, 8, 1, 0, 0, 9, 2, 7, 1, 1, 6}, {1, 1, 4, 4}));
  CHECK(vals(max_pool2d(x, 2).data()) == std::vector<double>{5, 8, 7, 9});
}

TEST_CASE("ops gradcheck: dropout with a fixed mask scales survivors by 1/(1-p)", "[nn][gradcheck]") {
  const double p = 0.3;
  Vs in{uleaf({40, 25}, 0.5, 1.5)};
  auto f = [p](const Vs& v) {
    manual_seed(7);  // the same mask on every call
    return dropout(v[0], p, true);
  };
  NL_GRADCHECK(f, in);
  Variable y = f(in);
  auto xv = vals(in[0].data()), yv = vals(y.data());
  int kept = 0;
  for (size_t i = 0; i < xv.size(); ++i) {
    if (yv[i] != 0) {
      ++kept;
      CHECK(yv[i] == Approx(xv[i] / (1 - p)).epsilon(1e-14));
    }
  }
  CHECK(kept / 1000.0 == Approx(0.7).margin(0.05));
  // The gradient is the same mask: 1/(1-p) where kept, 0 where dropped.
  in[0].zero_grad();
  y.backward(Tensor::ones(y.shape(), DType::Float64));
  auto gv = vals(in[0].grad());
  for (size_t i = 0; i < gv.size(); ++i) CHECK(gv[i] == Approx(yv[i] != 0 ? 1 / (1 - p) : 0.0));
  // the mask is regenerated in backward: the graph keeps only the leaf itself
  CHECK(graph_held_bytes(y) == in[0].data().storage()->nbytes());
  // a non-contiguous input gets the mask of its contiguous copy
  manual_seed(7);
  Variable yt = dropout(transpose(in[0], 0, 1), p, true);
  manual_seed(7);
  Variable yc = dropout(Variable(in[0].data().transpose(0, 1).contiguous()), p, true);
  CHECK(vals(yt.data()) == vals(yc.data()));
  // eval mode is the identity and records nothing
  CHECK(dropout(in[0], p, false).impl() == in[0].impl());
  CHECK_THROWS_AS(dropout(in[0], 1.0, true), std::invalid_argument);
}

TEST_CASE("ops gradcheck: dropout_add equals the residual plus dropout bit for bit", "[nn][gradcheck]") {
  const double p = 0.3;
  for (DType dt : {DType::Float64, DType::Float32}) {
    manual_seed(3);
    Variable r(Tensor::randn({6, 35}, 0, 1, dt), true), x(Tensor::randn({6, 35}, 0, 1, dt), true);
    Tensor w = Tensor::randn({6, 35}, 0, 1, dt);
    manual_seed(7);
    Variable fused = dropout_add(r, x, p, true);
    sum(fused * Variable(w)).backward();
    const Tensor gr = r.grad(), gx = x.grad();
    r.zero_grad();
    x.zero_grad();
    manual_seed(7);
    Variable apart = r + dropout(x, p, true);
    sum(apart * Variable(w)).backward();
    CHECK(vals(fused.data()) == vals(apart.data()));
    CHECK(vals(gr) == vals(r.grad()));
    CHECK(vals(gx) == vals(x.grad()));
    // both drew the same counters: the next number of the stream is the same
    manual_seed(7);
    dropout_add(r, x, p, true);
    const double after_fused = Tensor::rand({1}, 0, 1, DType::Float64).item();
    manual_seed(7);
    dropout(x, p, true);
    CHECK(Tensor::rand({1}, 0, 1, DType::Float64).item() == after_fused);
  }
  Vs in{leaf({4, 9}), uleaf({4, 9}, 0.5, 1.5)};
  NL_GRADCHECK(([p](const Vs& v) {
                 manual_seed(7);  // the same mask on every call
                 return dropout_add(v[0], v[1], p, true);
               }),
               in);
  // eval mode and p = 0 are the plain sum; a shape mismatch is an error naming both shapes
  CHECK(vals(dropout_add(in[0], in[1], p, false).data()) == vals((in[0] + in[1]).data()));
  CHECK(vals(dropout_add(in[0], in[1], 0.0, true).data()) == vals((in[0] + in[1]).data()));
  CHECK_THROWS_WITH(dropout_add(in[0], leaf({9, 4}), p, true), Catch::Matchers::Contains("[4, 9]") &&
                                                                    Catch::Matchers::Contains("[9, 4]"));
  CHECK_THROWS_AS(dropout_add(in[0], in[1], 1.0, true), std::invalid_argument);
}

TEST_CASE("ops gradcheck: ffn_relu in row blocks equals fc2 of dropout of relu of fc1", "[nn][gradcheck]") {
  manual_seed(11);
  // D = 6, F = 9, 2 x 5 = 10 rows: blocks of 4 rows (three, the last one partial) and one block of all
  Vs in{leaf({2, 5, 6}), leaf({9, 6}), leaf({9}), leaf({6, 9}), leaf({6})};
  for (double p : {0.0, 0.3}) {
    for (int64_t rows : {4, 0}) {
      INFO("p " << p << " block_rows " << rows);
      auto fused = [p, rows](const Vs& v) {
        manual_seed(5);  // the same mask on every call
        return ffn_relu(v[0], v[1], v[2], v[3], v[4], p, true, rows);
      };
      auto apart = [p](const Vs& v) {
        manual_seed(5);
        return linear(dropout(relu(linear(v[0], v[1], v[2])), p, true), v[3], v[4]);
      };
      NL_GRADCHECK(fused, in);
      NL_GRADCHECK([p, rows](const Vs& v) {  // without biases
        manual_seed(5);
        return ffn_relu(v[0], v[1], Variable(), v[2], Variable(), p, true, rows);
      }, Vs({in[0], in[1], in[3]}));
      // the same values and gradients as the ops apart (the same counter stream for the mask)
      Tensor w = Tensor::randn({2, 5, 6}, 0, 1, DType::Float64);
      auto run = [&](bool use_fused) {
        for (auto& v : in) v.zero_grad();
        Variable y = use_fused ? fused(in) : apart(in);
        sum(y * Variable(w)).backward();
        std::vector<std::vector<double>> r{vals(y.data())};
        for (auto& v : in) r.push_back(vals(v.grad()));
        return r;
      };
      const auto got = run(true), want = run(false);
      for (size_t k = 0; k < got.size(); ++k)
        for (size_t i = 0; i < got[k].size(); ++i) CHECK(got[k][i] == Approx(want[k][i]).epsilon(1e-12).margin(1e-14));
      // the graph keeps x, the hidden layer [10, 9] and the parameters, as the ops apart do
      Variable y = fused(in);
      size_t leaves = 0;
      for (auto& v : in) leaves += v.data().storage()->nbytes();
      CHECK(graph_held_bytes(y) == leaves + 10 * 9 * sizeof(double));
    }
  }
  // eval mode: no dropout, and the RNG stream is not advanced
  manual_seed(9);
  Variable e = ffn_relu(in[0], in[1], in[2], in[3], in[4], 0.5, false);
  Tensor after = Tensor::rand({1}, 0, 1, DType::Float64);
  CHECK(vals(e.data()) == vals(ffn_relu(in[0], in[1], in[2], in[3], in[4], 0.0, true).data()));
  manual_seed(9);
  CHECK(vals(after) == vals(Tensor::rand({1}, 0, 1, DType::Float64)));
  CHECK_THROWS_AS(ffn_relu(in[0], in[1], Variable(leaf({8})), in[3], in[4], 0.1, true), std::invalid_argument);
  CHECK_THROWS_AS(ffn_relu(in[0], in[3], in[2], in[1], in[4], 0.1, true), std::invalid_argument);
  CHECK_THROWS_AS(ffn_relu(in[0], in[1], in[2], in[3], in[4], 1.0, true), std::invalid_argument);
  CHECK_THROWS_AS(ffn_relu(in[0], in[1], in[2], in[3], in[4], 0.1, true, -1), std::invalid_argument);
}

TEST_CASE("ops gradcheck: cross_entropy with label smoothing and ignore_index", "[nn][gradcheck]") {
  manual_seed(4);
  Vs in{leaf({6, 5})};
  Tensor tgt = Tensor::from_vector<int64_t>({0, 4, -100, 2, 2, -100}, {6});
  for (double ls : {0.0, 0.1, 0.3}) {
    INFO("label_smoothing " << ls);
    NL_GRADCHECK([&](const Vs& v) { return cross_entropy(v[0], tgt, ls, -100); }, in);
  }
  Tensor tgt2 = Tensor::from_vector<int64_t>({0, 4, 1, 2, 1, 3}, {6});
  NL_GRADCHECK([&](const Vs& v) { return cross_entropy(v[0], tgt2, 0.2, 1); }, in);  // ignore class 1
  // Hand value: smoothing eps over C classes = (1-eps)*nll + eps*mean_c(-log p_c), mean over kept rows.
  Tensor lp = log_softmax(in[0].data(), -1);
  auto l = vals(lp);
  double want = 0;
  int n = 0;
  const double eps = 0.1;
  for (int i = 0; i < 6; ++i) {
    int64_t t = tgt.to_vector<int64_t>()[i];
    if (t == -100) continue;
    double m = 0;
    for (int c = 0; c < 5; ++c) m += -l[i * 5 + c] / 5;
    want += (1 - eps) * -l[i * 5 + t] + eps * m;
    ++n;
  }
  CHECK(cross_entropy(in[0], tgt, eps).item() == Approx(want / n).epsilon(1e-12));
  CHECK(cross_entropy(in[0], Tensor::full({6}, -100, DType::Int64), 0.1).item() == 0.0);
}

TEST_CASE("ops gradcheck: softmax and log_softmax along a non-last dim", "[nn][gradcheck]") {
  manual_seed(5);
  Vs in{leaf({3, 4, 2})};
  for (int d : {0, 1, -1}) {
    INFO("dim " << d);
    NL_GRADCHECK([d](const Vs& v) { return softmax(v[0], d); }, in);
    NL_GRADCHECK([d](const Vs& v) { return log_softmax(v[0], d); }, in);
  }
  auto s = vals(nl::sum(softmax(in[0], 0).data(), {0}));
  for (double v : s) CHECK(v == Approx(1.0).epsilon(1e-14));
}

TEST_CASE("ops gradcheck: embedding and index_select with repeated ids", "[nn][gradcheck]") {
  manual_seed(6);
  Vs in{leaf({6, 3})};
  Tensor ids = Tensor::from_vector<int64_t>({1, 3, 1, 1, 5, 0}, {2, 3});
  NL_GRADCHECK([&](const Vs& v) { return embedding(v[0], ids); }, in);
  Tensor idx = Tensor::from_vector<int64_t>({2, 0, 2}, {3});
  NL_GRADCHECK([&](const Vs& v) { return index_select(v[0], 1, idx); }, in);
  // Repeated id 1 appears 3 times: its row's gradient is the sum of three upstream rows.
  in[0].zero_grad();
  Variable e = embedding(in[0], ids);
  e.backward(Tensor::ones(e.shape(), DType::Float64));
  auto g = vals(in[0].grad());
  CHECK(g[1 * 3] == 3.0);
  CHECK(g[2 * 3] == 0.0);
  CHECK(g[5 * 3] == 1.0);
}

TEST_CASE("ops gradcheck: cat, stack, slice, permute, expand, reshape views", "[nn][gradcheck]") {
  manual_seed(7);
  Vs in{leaf({3, 4}), leaf({2, 3}), leaf({1, 4})};
  NL_GRADCHECK([](const Vs& v) { return cat({slice(v[0], 1, 0, 4, 2), permute(v[1], {1, 0})}, 1); }, in);
  NL_GRADCHECK([](const Vs& v) { return cat({v[0], expand(v[2], {2, 4})}, 0); }, in);
  NL_GRADCHECK([](const Vs& v) { return stack({v[0], expand(v[2], {3, 4})}, 1); }, in);
  NL_GRADCHECK([](const Vs& v) { return slice(reshape(transpose(v[0], 0, 1), {2, 6}), 1, 1, 6, 2); }, in);
  NL_GRADCHECK([](const Vs& v) { return flatten(unsqueeze(squeeze(v[2], 0), 1)); }, in);
  NL_GRADCHECK([](const Vs& v) { return contiguous(permute(unsqueeze(v[0], 0), {2, 0, 1})); }, in);
}

TEST_CASE("ops gradcheck: broadcasting add, sub, mul, div", "[nn][gradcheck]") {
  manual_seed(8);
  Vs in{leaf({2, 3, 4}), leaf({3, 1}), uleaf({4}, 0.5, 2.0)};
  NL_GRADCHECK([](const Vs& v) { return add(v[0], v[1]); }, in);
  NL_GRADCHECK([](const Vs& v) { return sub(v[1], v[0]); }, in);
  NL_GRADCHECK([](const Vs& v) { return mul(v[0], mul(v[1], v[2])); }, in);
  NL_GRADCHECK([](const Vs& v) { return div(v[0], v[2]); }, in);
  NL_GRADCHECK([](const Vs& v) { return div(v[1], expand(unsqueeze(v[2], 0), {3, 4})); }, in);
  NL_GRADCHECK([](const Vs& v) { return div(transpose(v[0], 0, 2), reshape(v[2], {4, 1, 1})); }, in);
  NL_GRADCHECK([](const Vs& v) { return 2.0 - v[0] * 3.0 + v[1] / 2.0 - (-v[2]); }, in);
}

TEST_CASE("ops gradcheck: pow, sqrt, rsqrt, exp, log, tanh, sigmoid, gelu, relu, abs, square", "[nn][gradcheck]") {
  manual_seed(9);
  Vs pos{uleaf({3, 5}, 0.3, 2.0)};
  Vs any{leaf({3, 5})};
  NL_GRADCHECK([](const Vs& v) { return pow(v[0], 1.5); }, pos);
  NL_GRADCHECK([](const Vs& v) { return pow(v[0], -2.0); }, pos);
  NL_GRADCHECK([](const Vs& v) { return sqrt(v[0]); }, pos);
  NL_GRADCHECK([](const Vs& v) { return rsqrt(v[0]); }, pos);
  NL_GRADCHECK([](const Vs& v) { return log(v[0]); }, pos);
  NL_GRADCHECK([](const Vs& v) { return exp(v[0]); }, any);
  NL_GRADCHECK([](const Vs& v) { return tanh(v[0]); }, any);
  NL_GRADCHECK([](const Vs& v) { return sigmoid(v[0]); }, any);
  NL_GRADCHECK([](const Vs& v) { return gelu(v[0]); }, any);
  NL_GRADCHECK([](const Vs& v) { return relu(v[0]); }, any);
  NL_GRADCHECK([](const Vs& v) { return abs(v[0]); }, any);
  NL_GRADCHECK([](const Vs& v) { return square(v[0]); }, any);
  NL_GRADCHECK([](const Vs& v) { return affine(v[0], -0.5, 3.0); }, any);
  Tensor cond = gt(any[0].data(), 0.0);
  NL_GRADCHECK([&](const Vs& v) { return where(cond, v[0], square(v[0])); }, any);
  NL_GRADCHECK([&](const Vs& v) { return masked_fill(v[0], cond, 0.25); }, any);
}

TEST_CASE("ops gradcheck: sum, mean, var, max over dims", "[nn][gradcheck]") {
  manual_seed(10);
  Vs in{leaf({3, 4, 5})};
  NL_GRADCHECK([](const Vs& v) { return sum(v[0]); }, in);
  NL_GRADCHECK([](const Vs& v) { return sum(v[0], {0, 2}, true); }, in);
  NL_GRADCHECK([](const Vs& v) { return mean(v[0], {1}); }, in);
  NL_GRADCHECK([](const Vs& v) { return mean(transpose(v[0], 0, 2), {-1}, true); }, in);
  for (int c : {0, 1}) {
    NL_GRADCHECK([c](const Vs& v) { return var(v[0], {-1}, c, true); }, in);
    NL_GRADCHECK([c](const Vs& v) { return var(v[0], {0, 1}, c); }, in);
  }
  NL_GRADCHECK([](const Vs& v) { return max(v[0], 1); }, in);
  NL_GRADCHECK([](const Vs& v) { return max(v[0], -1, true); }, in);
  // var against the definition: mean 3.5, squared deviations sum to 21
  Tensor x = Tensor::from_vector<double>({1, 2, 4, 7}, {4});
  CHECK(var(Variable(x), {0}, 0).item() == Approx(5.25));
  CHECK(var(Variable(x), {0}, 1).item() == Approx(7.0));
}

TEST_CASE("ops: detach sends no gradient", "[nn][gradcheck]") {
  manual_seed(11);
  Variable x = leaf({4});
  Variable y = add(mul(x, x), mul(detach(x), x));  // d/dx = 2x + x (the detached factor is a constant)
  y.backward(Tensor::ones({4}, DType::Float64));
  auto xv = vals(x.data()), g = vals(x.grad());
  for (int i = 0; i < 4; ++i) CHECK(g[i] == Approx(3 * xv[i]).epsilon(1e-14));
}

TEST_CASE("ffn_forward: the fused ReLU path equals fc1 then ReLU then dropout, the path a hook on fc1 takes",
          "[nn][transformer]") {
  manual_seed(3);
  Linear fc1(8, 16, true, DType::Float64), fc2(16, 8, true, DType::Float64);
  Variable x(Tensor::randn({2, 5, 8}, 0, 1, DType::Float64), true);
  std::vector<Variable> ps{x, fc1.weight, fc1.bias, fc2.weight, fc2.bias};
  auto run = [&](bool hooked) {
    for (auto& v : ps) v.zero_grad();
    int seen = 0, h = -1;
    if (hooked) h = fc1.register_forward_hook([&](Module&, const Vs&, const Variable&) { ++seen; });
    manual_seed(4);
    Variable y = transformer_detail::ffn_forward("relu", fc1, fc2, x, 0.25, true);
    sum(y * y).backward();
    if (hooked) fc1.remove_forward_hook(h);
    CHECK(seen == (hooked ? 1 : 0));
    std::vector<std::vector<double>> r{vals(y.data())};
    for (auto& v : ps) r.push_back(vals(v.grad()));
    return r;
  };
  const auto fused = run(false), apart = run(true);
  for (size_t k = 0; k < fused.size(); ++k) {
    INFO("output / gradient " << k);
    REQUIRE(fused[k].size() == apart[k].size());
    for (size_t i = 0; i < fused[k].size(); ++i) CHECK(fused[k][i] == Approx(apart[k][i]).epsilon(1e-12).margin(1e-14));
  }
}
