// self_attention (q, k, v projections as one product): equal to three linear() calls and attention() in
// values and every gradient (float64, with masks and with dropout under one seed), a float64 gradcheck,
// bfloat16 autocast against the unfused path, what MultiheadAttention runs, and argument errors.
#include <catch2/catch.hpp>

#include <array>

#include "autograd/functions.h"
#include "autograd/functions/self_attention.h"
#include "autograd/memory.h"
#include "nn/attention.h"
#include "nn/nn_test_util.h"
#include "tensor/autocast.h"

using namespace nl;
using nltest::leaf;
using nltest::max_abs_diff;

namespace {
struct Params {
  Variable x;
  std::array<Variable, 3> w, b;
};
Params make_params(int64_t B, int64_t T, int64_t D, DType dt) {
  auto p = [&](const Shape& s) { return Variable(Tensor::randn(s, 0.0, 0.5, DType::Float64).to(dt), true); };
  return {p({B, T, D}), {p({D, D}), p({D, D}), p({D, D})}, {p({D}), p({D}), p({D})}};
}
// The unfused reference: three linear() calls, the head split, attention().
Variable unfused(const Params& p, int64_t heads, const AttentionOptions& o) {
  const int64_t B = p.x.size(0), T = p.x.size(1), D = p.w[0].size(0);
  auto split = [&](const Variable& y) { return transpose(reshape(y, {B, T, heads, D / heads}), 1, 2); };
  return attention(split(linear(p.x, p.w[0], p.b[0], true)), split(linear(p.x, p.w[1], p.b[1], true)),
                   split(linear(p.x, p.w[2], p.b[2], true)), o);
}
std::vector<Tensor> grads(const Params& p) {
  std::vector<Tensor> g{p.x.grad()};
  for (const auto& w : p.w) g.push_back(w.grad());
  for (const auto& b : p.b) g.push_back(b.grad());
  return g;
}
void zero(Params& p) {
  p.x.zero_grad();
  for (auto& w : p.w) w.zero_grad();
  for (auto& b : p.b) b.zero_grad();
}
// Runs f and the reference on the same parameters and seed; returns the largest value and gradient gaps.
std::pair<double, double> compare(Params& p, int64_t heads, const AttentionOptions& o, DType loss_w_dt) {
  const Tensor w = Tensor::randn({p.x.size(0), heads, p.x.size(1), p.w[0].size(0) / heads}, 0.0, 1.0, loss_w_dt);
  manual_seed(21);
  Variable y1 = self_attention(p.x, p.w, p.b, heads, o);
  sum(y1.to(loss_w_dt) * Variable(w)).backward();
  const std::vector<Tensor> g1 = grads(p);
  zero(p);
  manual_seed(21);
  Variable y2 = unfused(p, heads, o);
  sum(y2.to(loss_w_dt) * Variable(w)).backward();
  const std::vector<Tensor> g2 = grads(p);
  double dg = 0;
  for (size_t i = 0; i < g1.size(); ++i) {
    REQUIRE(g1[i].dtype() == g2[i].dtype());
    dg = std::max(dg, max_abs_diff(g1[i].to(DType::Float64), g2[i].to(DType::Float64)));
  }
  return {max_abs_diff(y1.data().to(DType::Float64), y2.data().to(DType::Float64)), dg};
}
}  // namespace

TEST_CASE("self_attention: equals three linear() calls and attention() (float64), masks and dropout",
          "[attention][self_attention]") {
  manual_seed(5);
  Params p = make_params(2, 5, 8, DType::Float64);
  AttentionOptions o;
  o.key_padding_mask = Tensor::from_vector<int64_t>({0, 0, 0, 0, 1, 0, 0, 1, 1, 1}, {2, 5});
  SECTION("padding") {
    auto [dy, dg] = compare(p, 2, o, DType::Float64);
    CHECK(dy < 1e-12);
    CHECK(dg < 1e-12);
  }
  SECTION("causal with dropout in training (the same mask under one seed)") {
    o.causal = true;
    o.dropout = 0.3;
    o.training = true;
    auto [dy, dg] = compare(p, 4, o, DType::Float64);
    CHECK(dy < 1e-12);
    CHECK(dg < 1e-12);
  }
}

TEST_CASE("self_attention: float64 gradcheck with padding", "[attention][self_attention][gradcheck]") {
  manual_seed(6);
  Params p = make_params(2, 3, 4, DType::Float64);
  AttentionOptions o;
  o.key_padding_mask = Tensor::from_vector<int64_t>({0, 0, 1, 0, 0, 0}, {2, 3});
  std::vector<Variable> in{p.x, p.w[0], p.w[1], p.w[2], p.b[0], p.b[1], p.b[2]};
  NL_GRADCHECK([&](const std::vector<Variable>& v) {
    return self_attention(v[0], {v[1], v[2], v[3]}, {v[4], v[5], v[6]}, 2, o);
  }, in);
}

TEST_CASE("self_attention: under bfloat16 autocast it matches the unfused path, gradients in float32",
          "[attention][self_attention][autocast]") {
  manual_seed(7);
  Params p = make_params(3, 16, 32, DType::Float32);
  AttentionOptions o;
  o.autocast_output = true;
  AutocastGuard guard(DType::BFloat16);
  auto [dy, dg] = compare(p, 4, o, DType::Float32);
  // bfloat16 operands alike; float32 sums in another order, a result rounded once to bfloat16
  CHECK(dy < 2e-2);
  CHECK(dg < 2e-2);
  Variable y = self_attention(p.x, p.w, p.b, 4, o);
  CHECK(y.dtype() == DType::BFloat16);
  CHECK(p.x.grad().dtype() == DType::Float32);
  for (const auto& w : p.w) CHECK(w.grad().dtype() == DType::Float32);
  for (const auto& b : p.b) CHECK(b.grad().dtype() == DType::Float32);
}

TEST_CASE("self_attention: MultiheadAttention runs it for self-attention only", "[attention][self_attention]") {
  manual_seed(8);
  MultiheadAttention m(8, 2, 0.0);
  m.to(DType::Float64);
  Variable x = leaf({2, 3, 8}), mem = leaf({2, 4, 8});
  bool saw_packed = false, saw_split = false;
  auto visit = [&](const Variable& y) {  // the ops that keep tensors for backward, by name
    const auto held = graph_held_bytes_by_op(y);
    saw_packed = held.count("SelfAttention") > 0;
    saw_split = held.count("Attention") > 0;
  };
  visit(m(x, x, x));
  CHECK(saw_packed);
  CHECK_FALSE(saw_split);
  visit(m(x, mem, mem));  // encoder-decoder attention: three projections
  CHECK_FALSE(saw_packed);
  CHECK(saw_split);
}

TEST_CASE("self_attention: bad shapes and head counts are named", "[attention][self_attention]") {
  Params p = make_params(2, 3, 8, DType::Float64);
  AttentionOptions o;
  CHECK_THROWS_WITH(self_attention(p.x, p.w, p.b, 3, o), Catch::Contains("must divide the projection size 8"));
  Variable w6(Tensor::zeros({6, 8}, DType::Float64), true);
  CHECK_THROWS_WITH(self_attention(p.x, {p.w[0], w6, p.w[2]}, p.b, 2, o), Catch::Contains("three [D, 8] matrices"));
  CHECK_THROWS_WITH(self_attention(p.x, p.w, {p.b[0], Variable(), p.b[2]}, 2, o),
                    Catch::Contains("all undefined or three [8] vectors"));
  CHECK_THROWS_WITH(self_attention(Variable(Tensor::zeros({3, 8}, DType::Float64), true), p.w, p.b, 2, o),
                    Catch::Contains("x must be [B, T, D]"));
  o.dropout = 1.5;
  CHECK_THROWS_WITH(self_attention(p.x, p.w, p.b, 2, o), Catch::Contains("dropout must be in [0, 1)"));
}
