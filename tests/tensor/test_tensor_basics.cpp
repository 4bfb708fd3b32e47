// Tensor construction, views, broadcasting and the basic ops against hand-computed values.
#include <catch2/catch.hpp>

#include "tensor/ops.h"

using namespace nl;
using Catch::Matchers::Contains;

static std::vector<double> vals(const Tensor& t) { return t.to_vector<double>(); }

TEST_CASE("tensor: factories, shape and item", "[tensor]") {
  Tensor z = Tensor::zeros({2, 3});
  CHECK(z.shape() == Shape{2, 3});
  CHECK(z.numel() == 6);
  CHECK(z.dtype() == DType::Float32);
  CHECK(vals(z) == std::vector<double>(6, 0.0));
  CHECK(Tensor::full({2}, 2.5, DType::Float64).to_vector<double>() == std::vector<double>{2.5, 2.5});
  CHECK(Tensor::scalar(3.0).item() == 3.0);
  CHECK(vals(Tensor::arange(4, DType::Int64)) == std::vector<double>{0, 1, 2, 3});
  CHECK_THROWS_WITH(Tensor::zeros({2, 2}).item(), Contains("one element"));
  CHECK_THROWS_WITH(Tensor::from_vector<float>({1, 2, 3}, {2, 2}), Contains("do not fill shape [2, 2]"));
}

TEST_CASE("tensor: views share storage and follow strides", "[tensor]") {
  Tensor a = Tensor::from_vector<double>({0, 1, 2, 3, 4, 5}, {2, 3});
  Tensor t = a.transpose(0, 1);
  CHECK(t.shape() == Shape{3, 2});
  CHECK(!t.is_contiguous());
  CHECK(vals(t) == std::vector<double>{0, 3, 1, 4, 2, 5});
  CHECK(t.is_alias_of(a));
  CHECK(vals(a.slice(1, 1, 3)) == std::vector<double>{1, 2, 4, 5});
  CHECK(vals(a.slice(1, 0, 3, 2)) == std::vector<double>{0, 2, 3, 5});
  CHECK(vals(a.select(0, 1)) == std::vector<double>{3, 4, 5});
  CHECK(vals(a.reshape({3, 2})) == std::vector<double>{0, 1, 2, 3, 4, 5});
  CHECK(vals(t.reshape({6})) == std::vector<double>{0, 3, 1, 4, 2, 5});
  CHECK_THROWS_WITH(t.view({6}), Contains("use reshape()"));
  CHECK(vals(a.permute({1, 0})) == vals(t));
  Tensor e = Tensor::from_vector<double>({1, 2}, {2, 1}).expand({2, 3});
  CHECK(vals(e) == std::vector<double>{1, 1, 1, 2, 2, 2});
  CHECK(a.unsqueeze(0).shape() == Shape{1, 2, 3});
  CHECK(a.unsqueeze(0).squeeze(0).shape() == Shape{2, 3});
  CHECK(Tensor::zeros({2, 3, 4}).flatten(1).shape() == Shape{2, 12});
  a.slice(1, 0, 1).fill_(9);
  CHECK(vals(a) == std::vector<double>{9, 1, 2, 9, 4, 5});
  CHECK(a.version() == 1);
  CHECK_THROWS_WITH(a.reshape({4, -1}), Contains("cannot infer"));
}

TEST_CASE("tensor: broadcasting binary ops and errors", "[tensor]") {
  Tensor a = Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Tensor::from_vector<double>({10, 20, 30}, {3});
  CHECK(vals(a + b) == std::vector<double>{11, 22, 33, 14, 25, 36});
  CHECK(vals(a - b) == std::vector<double>{-9, -18, -27, -6, -15, -24});
  CHECK(vals(a * Tensor::from_vector<double>({2, 3}, {2, 1})) == std::vector<double>{2, 4, 6, 12, 15, 18});
  CHECK(vals(b / a.slice(0, 0, 1)) == std::vector<double>{10, 10, 10});
  CHECK(vals(a.transpose(0, 1) + Tensor::from_vector<double>({100, 200}, {2})) ==
        std::vector<double>{101, 204, 102, 205, 103, 206});
  CHECK(vals(maximum(a, Tensor::scalar(3.5, DType::Float64))) == std::vector<double>{3.5, 3.5, 3.5, 4, 5, 6});
  CHECK(vals(gt(a, 3.0)) == std::vector<double>{0, 0, 0, 1, 1, 1});
  CHECK_THROWS_WITH(a + Tensor::zeros({4}, DType::Float64), Contains("cannot be broadcast"));
  CHECK_THROWS_WITH(a + Tensor::zeros({3}), Contains("dtype mismatch"));
}

TEST_CASE("tensor: where over every broadcast pattern equals the elementwise definition", "[tensor]") {
  // The CPU kernel has fast paths for a row-constant condition (a [N, 1] mask) and for contiguous or
  // broadcast values beside a contiguous condition; each pattern against cond != 0 ? a : b by index.
  const int64_t N = 5, D = 37;  // D not a multiple of a vector
  Tensor cfull = gt(Tensor::randn({N, D}, 0.0, 1.0, DType::Float64), 0.0);
  Tensor crow = gt(Tensor::randn({N, 1}, 0.0, 1.0, DType::Float64), 0.0);
  Tensor afull = Tensor::randn({N, D}, 0.0, 1.0, DType::Float64), arow = Tensor::randn({1, D}, 0.0, 1.0, DType::Float64);
  Tensor bfull = Tensor::randn({N, D}, 0.0, 1.0, DType::Float64), bs = Tensor::scalar(-7.0, DType::Float64);
  Tensor bt = Tensor::randn({D, N}, 0.0, 1.0, DType::Float64).transpose(0, 1);  // strided
  for (const Tensor& c : {cfull, crow})
    for (const Tensor& a : {afull, arow, bs})
      for (const Tensor& b : {bfull, bs, bt}) {
        if (c.size(1) == 1 && a.dim() == 0 && b.dim() == 0) continue;  // a [N, 1] result: not this test's
        const std::vector<double> got = vals(where(c, a, b));
        REQUIRE(got.size() == (size_t)(N * D));
        const Tensor cb = c.expand({N, D}).contiguous(), ab = a.expand({N, D}).contiguous(), bb = b.expand({N, D}).contiguous();
        const std::vector<double> cv = vals(cb), av = vals(ab), bv = vals(bb);
        for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == (cv[i] != 0 ? av[i] : bv[i]));
      }
}

TEST_CASE("tensor: unary math against std", "[tensor]") {
  Tensor x = Tensor::from_vector<double>({-1.5, -0.2, 0.3, 2.0}, {4});
  auto v = vals(x);
  auto check = [&](const Tensor& y, auto f) {
    auto r = vals(y);
    for (size_t i = 0; i < v.size(); ++i) CHECK(r[i] == Approx(f(v[i])).margin(1e-12));
  };
  check(exp(x), [](double a) { return std::exp(a); });
  check(tanh(x), [](double a) { return std::tanh(a); });
  check(sigmoid(x), [](double a) { return 1 / (1 + std::exp(-a)); });
  check(relu(x), [](double a) { return a > 0 ? a : 0; });
  check(gelu(x), [](double a) { return 0.5 * a * (1 + std::erf(a / std::sqrt(2.0))); });
  check(abs(x), [](double a) { return std::abs(a); });
  check(pow(abs(x), 1.5), [](double a) { return std::pow(std::abs(a), 1.5); });
  check(sqrt(abs(x)), [](double a) { return std::sqrt(std::abs(a)); });
  check(rsqrt(abs(x)), [](double a) { return 1 / std::sqrt(std::abs(a)); });
  check(log(abs(x)), [](double a) { return std::log(std::abs(a)); });
}

TEST_CASE("tensor: reductions with dims, keepdim and correction", "[tensor]") {
  Tensor a = Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(sum(a).item() == 21);
  CHECK(vals(sum(a, {0})) == std::vector<double>{5, 7, 9});
  CHECK(vals(sum(a, {1}, true)) == std::vector<double>{6, 15});
  CHECK(sum(a, {1}, true).shape() == Shape{2, 1});
  CHECK(vals(mean(a, {-1})) == std::vector<double>{2, 5});
  CHECK(vals(max(a, 0)) == std::vector<double>{4, 5, 6});
  CHECK(vals(argmax(Tensor::from_vector<double>({1, 7, 7, 0}, {2, 2}), 1)) == std::vector<double>{1, 0});
  CHECK(vals(var(a, {1}, 1)) == std::vector<double>{1, 1});
  CHECK(vals(var(a, {1}, 0))[0] == Approx(2.0 / 3.0));
  CHECK(vals(sum(a.transpose(0, 1), {1})) == std::vector<double>{5, 7, 9});
  CHECK(vals(sum_to(Tensor::ones({2, 3, 4}, DType::Float64), {3, 1})) == std::vector<double>{8, 8, 8});
}

TEST_CASE("tensor: matmul shapes, transposed operands and batches", "[tensor]") {
  Tensor a = Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Tensor::from_vector<double>({1, 0, 0, 1, 1, 1}, {3, 2});
  CHECK(vals(matmul(a, b)) == std::vector<double>{4, 5, 10, 11});
  CHECK(vals(matmul(b.transpose(0, 1), a.transpose(0, 1))) == std::vector<double>{4, 10, 5, 11});
  Tensor ab = stack({a, a}, 0);  // [2, 2, 3]
  CHECK(vals(matmul(ab, b)) == std::vector<double>{4, 5, 10, 11, 4, 5, 10, 11});
  CHECK(vals(matmul(ab, stack({b, b}, 0))) == vals(matmul(ab, b)));
  CHECK_THROWS_WITH(matmul(a, a), Contains("inner dims differ"));
  Tensor f = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  CHECK(f.to(DType::Float64).dtype() == DType::Float64);
  CHECK(vals(matmul(f, f)) == std::vector<double>{7, 10, 15, 22});
}

TEST_CASE("tensor: addmm adds the bias to every row of the product", "[tensor]") {
  Tensor a = Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Tensor::from_vector<double>({1, 0, 0, 1, 1, 1}, {3, 2});
  Tensor bias = Tensor::from_vector<double>({10, -1}, {2});
  CHECK(vals(addmm(bias, a, b)) == std::vector<double>{14, 4, 20, 10});
  // a transposed operand (a strided view BLAS reads in place)
  CHECK(vals(addmm(bias, b.transpose(0, 1), a.transpose(0, 1))) == std::vector<double>{14, 9, 15, 10});
  CHECK_THROWS_WITH(addmm(Tensor::zeros({3}, DType::Float64), a, b), Contains("bias [3] should be [2]"));
  CHECK_THROWS_WITH(addmm(bias, a, a), Contains("inner dims differ"));
  CHECK_THROWS_WITH(addmm(bias, Tensor::zeros({2, 2, 3}, DType::Float64), b), Contains("2-d operands"));
  CHECK_THROWS(addmm(bias.to(DType::Float32), a, b));
  // A result dtype the operands cannot give, and a bfloat16 bias for a float32 result of bfloat16 operands.
  CHECK_THROWS_WITH(addmm(bias, a, b, DType::Float32), Contains("float64 operands cannot give a float32 result"));
  const Tensor a16 = a.to(DType::BFloat16), b16 = b.to(DType::BFloat16);
  CHECK_THROWS_WITH(addmm(bias.to(DType::BFloat16), a16, b16, DType::Float32), Contains("need a float32 bias, got bfloat16"));
}

TEST_CASE("tensor: cat, stack, index_select, embedding, softmax", "[tensor]") {
  Tensor a = Tensor::from_vector<double>({1, 2, 3, 4}, {2, 2});
  CHECK(vals(cat({a, a}, 1)) == std::vector<double>{1, 2, 1, 2, 3, 4, 3, 4});
  CHECK(stack({a, a}, 1).shape() == Shape{2, 2, 2});
  Tensor idx = Tensor::from_vector<int64_t>({1, 1, 0}, {3});
  CHECK(vals(index_select(a, 0, idx)) == std::vector<double>{3, 4, 3, 4, 1, 2});
  CHECK(vals(index_select(a, 1, idx)) == std::vector<double>{2, 2, 1, 4, 4, 3});
  CHECK(embedding(a, Tensor::from_vector<int64_t>({0, 1, 1, 0}, {2, 2})).shape() == Shape{2, 2, 2});
  CHECK_THROWS_WITH(embedding(a, Tensor::from_vector<int64_t>({5}, {1})), Contains("out of range"));
  auto s = vals(softmax(Tensor::from_vector<double>({0, std::log(3.0)}, {1, 2})));
  CHECK(s[0] == Approx(0.25));
  CHECK(s[1] == Approx(0.75));
  auto ls = vals(log_softmax(Tensor::from_vector<double>({0, std::log(3.0)}, {2, 1}), 0));
  CHECK(ls[0] == Approx(std::log(0.25)));
}

TEST_CASE("tensor: random fills are reproducible from the seed", "[tensor]") {
  manual_seed(7);
  auto a = vals(Tensor::randn({1000}, 0, 1, DType::Float64));
  manual_seed(7);
  auto b = vals(Tensor::randn({1000}, 0, 1, DType::Float64));
  CHECK(a == b);
  double m = 0, v = 0;
  for (double x : a) m += x / 1000;
  for (double x : a) v += (x - m) * (x - m) / 999;
  CHECK(std::abs(m) < 0.1);
  CHECK(v == Approx(1.0).epsilon(0.1));
  auto u = vals(Tensor::rand({1000}, 2, 3, DType::Float64));
  for (double x : u) CHECK((x >= 2 && x < 3));
}

TEST_CASE("tensor: gather along a dim, torch semantics", "[tensor]") {
  Tensor a = Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor i1 = Tensor::from_vector<int64_t>({2, 0, 1, 1}, {2, 2});
  CHECK(vals(gather(a, 1, i1)) == std::vector<double>{3, 1, 5, 5});
  Tensor i0 = Tensor::from_vector<int64_t>({1, 0}, {1, 2});
  CHECK_THROWS_WITH(gather(a, 0, i0), Contains("must match"));
  Tensor i0b = Tensor::from_vector<int64_t>({1, 0, 1, 0, 0, 0}, {2, 3});
  CHECK(vals(gather(a, 0, i0b)) == std::vector<double>{4, 2, 6, 1, 2, 3});
  CHECK_THROWS_WITH(gather(a, 1, Tensor::from_vector<int64_t>({3, 0, 0, 0}, {2, 2})), Contains("out of range"));
}
