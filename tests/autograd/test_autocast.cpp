// Autocast (issue 26, docs/mixed-precision.md): the guard, the one policy table and that it is what runs
// in a Transformer step, casts as tape nodes, products of rounded operands, float32 norms / loss /
// gradients / master weights, one weight cast per update, Detach under autocast, and the emulated CPU
// path (NORMLAB_BF16_FALLBACK=1) against the native one.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>

#include "bf16_test_util.h"
#include "backends/mixed_precision.h"
#include "nn/attention.h"
#include "nn/transformer/transformer.h"
#include "optim/optimizer.h"
#include "tensor/autocast.h"
#include "tensor/cast_cache.h"
#include "test_paths.h"
#include "../nn/transformer_test_util.h"

using namespace nl;
using nltest::EnvGuard;
using nltest::max_abs_diff;
using Catch::Matchers::Contains;

namespace {

Tensor round_bf16(const Tensor& t) { return t.to(DType::BFloat16).to(DType::Float32); }

// ||a - b|| / ||b|| in float64.
double rel_err(const Tensor& a, const Tensor& b) {
  const auto x = a.to_vector<double>(), y = b.to_vector<double>();
  REQUIRE(x.size() == y.size());
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) num += (x[i] - y[i]) * (x[i] - y[i]), den += y[i] * y[i];
  return std::sqrt(num / std::max(den, 1e-300));
}

// ||a|| in float64.
double norm2(const Tensor& a) {
  double s = 0;
  for (double v : a.to_vector<double>()) s += v * v;
  return std::sqrt(s);
}

// A small float32 Transformer (dropout on, so the fused dropout paths run too) and one batch.
TransformerConfig step_config() {
  TransformerConfig c = nltest::tiny_config(true, "layernorm", DType::Float32);
  c.d_model = 32;
  c.n_heads = 4;
  c.ffn_dim = 64;
  c.encoder_layers = c.decoder_layers = 2;
  c.src_vocab = c.tgt_vocab = 20;
  c.dropout = c.attention_dropout = c.activation_dropout = 0.1;
  return c;
}
const Tensor kSrc = nltest::tokens({{1, 4, 5, 6, 7, 2}, {8, 9, 10, 11, 12, 2}, {13, 14, 2, 1, 1, 1}});
const Tensor kPrev = nltest::tokens({{2, 4, 5, 6, 7}, {2, 7, 7, 3, 4}, {2, 11, 12, 1, 1}});
const Tensor kTgt = Tensor::from_vector(std::vector<int64_t>{4, 5, 6, 7, 2, 7, 7, 3, 4, 2, 11, 12, 2, -100, -100},
                                         {15});

// Forward (under autocast when `bf16`) and backward of one batch; returns the loss.
double loss_and_backward(TransformerModel& m, bool bf16, uint64_t seed) {
  manual_seed(seed);  // the same dropout masks in every run
  Variable loss;
  {
    AutocastGuard g(DType::BFloat16, bf16);
    Variable logits = m.forward(kSrc, kPrev);
    loss = cross_entropy(reshape(logits, {-1, logits.size(-1)}), kTgt, 0.1);
  }
  loss.backward();
  return loss.item();
}

}  // namespace

TEST_CASE("autocast: guards nest and restore, only bfloat16 is a lower dtype", "[autocast]") {
  CHECK_FALSE(autocast_dtype().has_value());
  {
    AutocastGuard on(DType::BFloat16);
    REQUIRE(autocast_dtype() == DType::BFloat16);
    {
      AutocastGuard off(DType::BFloat16, false);
      CHECK_FALSE(autocast_dtype().has_value());
    }
    CHECK(autocast_dtype() == DType::BFloat16);
  }
  CHECK_FALSE(autocast_dtype().has_value());
  CHECK_THROWS_WITH(AutocastGuard(DType::Float64), Contains("bfloat16 only"));
}

TEST_CASE("autocast: one table row per op, casts follow it, float64 is never lowered", "[autocast]") {
  const auto& t = autocast_table();
  for (size_t i = 0; i < t.size(); ++i) CHECK(static_cast<size_t>(t[i].op) == i);
  CHECK(autocast_rule(AutocastOp::Linear).policy == CastPolicy::Lower);
  CHECK(autocast_rule(AutocastOp::Norm).policy == CastPolicy::Float32);
  CHECK(autocast_rule(AutocastOp::CrossEntropy).policy == CastPolicy::Float32Math);
  CHECK_FALSE(autocast_cast_to(AutocastOp::Linear, DType::Float32).has_value());  // no guard: nothing
  AutocastGuard g(DType::BFloat16);
  CHECK(autocast_cast_to(AutocastOp::Linear, DType::Float32) == DType::BFloat16);
  CHECK_FALSE(autocast_cast_to(AutocastOp::Linear, DType::Float64).has_value());
  CHECK(autocast_cast_to(AutocastOp::Softmax, DType::BFloat16) == DType::Float32);
  CHECK_FALSE(autocast_cast_to(AutocastOp::Softmax, DType::Float32).has_value());
  CHECK_FALSE(autocast_cast_to(AutocastOp::CrossEntropy, DType::BFloat16).has_value());  // read as it is
  CHECK(AutocastTrace::allowed(AutocastOp::CrossEntropy, DType::BFloat16));
  CHECK_FALSE(AutocastTrace::allowed(AutocastOp::Norm, DType::BFloat16));
}

TEST_CASE("to_dtype: a Cast node on the tape whose backward casts the gradient back", "[autocast]") {
  manual_seed(3);
  Variable x(Tensor::randn({4, 3}), true, "x");
  Tape::current().clear();
  Variable y = to_dtype(x, DType::Float64);
  REQUIRE(y.dtype() == DType::Float64);
  Variable z = sum(y * y);
  CHECK_THAT(Tape::current().dump(), Contains("Cast {float32 -> float64} <- x"));
  z.backward();
  REQUIRE(x.grad().dtype() == DType::Float32);
  CHECK(max_abs_diff(x.grad(), x.data() * 2.0) == 0.0);
  CHECK(to_dtype(x, DType::Float32).impl() == x.impl());  // same dtype: x itself, no node
  CHECK_FALSE(x.to(DType::Int64).requires_grad());        // no gradient through integers
  Variable b = x.to(DType::BFloat16);
  CHECK(b.dtype() == DType::BFloat16);
  CHECK(max_abs_diff(b.data().to(DType::Float32), round_bf16(x.data())) == 0.0);
}

TEST_CASE("autocast: linear is the float32 product of the rounded operands, gradients reach float32 leaves",
          "[autocast]") {
  NL_SKIP_WITHOUT_ONEDNN();
  manual_seed(5);
  Variable x(Tensor::randn({6, 40}), true, "x");
  Variable w(Tensor::randn({24, 40}), true, "w");
  Variable b(Tensor::randn({24}), true, "b");
  Tape::current().clear();
  Variable y, y_act;
  {
    AutocastGuard g(DType::BFloat16);
    y = linear(x, w, b);
    y_act = linear(x * 1.0, w, b);  // an activation (not a leaf) is cast anew each time, not cached
  }
  REQUIRE(y.dtype() == DType::Float32);
  // Reference: float64 product of the bfloat16-rounded operands; allowed: float32 accumulation error.
  const Tensor xr = round_bf16(x.data()).to(DType::Float64), wr = round_bf16(w.data()).to(DType::Float64);
  const Tensor ref = add(matmul(xr, wr.transpose(0, 1)), b.data().to(DType::Float64));
  const Tensor scale = matmul(abs(xr), abs(wr).transpose(0, 1));
  const auto got = y.data().to_vector<double>(), r = ref.to_vector<double>(), s = scale.to_vector<double>();
  for (size_t i = 0; i < got.size(); ++i) REQUIRE(std::fabs(got[i] - r[i]) <= 41 * std::ldexp(1.0, -23) * (s[i] + 1));
  const std::string tape = Tape::current().dump();
  // Leaves that require grad are cast through the weight-cast cache, as torch's cached_cast does
  // (requires_grad and is_leaf): the input x here as much as the weight w.
  CHECK_THAT(tape, Contains("Cast {float32 -> bfloat16, cached} <- x"));
  CHECK_THAT(tape, Contains("Cast {float32 -> bfloat16, cached} <- w"));
  CHECK_THAT(tape, Contains("Cast {float32 -> bfloat16} <- #"));
  CHECK(max_abs_diff(y_act.data(), y.data()) == 0.0);
  // Gradients: float32 on every leaf, within bfloat16 tolerance of the float32 op's.
  Tensor gy = Tensor::randn({6, 24});
  y.backward(gy);
  Variable x2(x.data(), true), w2(w.data(), true), b2(b.data(), true);
  linear(x2, w2, b2).backward(gy);
  for (auto [a, ref32] : {std::pair{x, x2}, std::pair{w, w2}, std::pair{b, b2}}) {
    REQUIRE(a.grad().dtype() == DType::Float32);
    CHECK(rel_err(a.grad(), ref32.grad()) < 2e-2);
  }
  CHECK(max_abs_diff(b.grad(), b2.grad()) < 1e-5);  // the bias gradient is a float32 sum
}

TEST_CASE("autocast: a product feeding only products writes bfloat16, with the same gradients", "[autocast]") {
  NL_SKIP_WITHOUT_ONEDNN();
  manual_seed(6);
  Variable x(Tensor::randn({6, 40}), true), w(Tensor::randn({24, 40}), true), b(Tensor::randn({24}), true);
  Variable y32, y16;
  {
    AutocastGuard g(DType::BFloat16);
    y32 = linear(x, w, b);
    y16 = linear(x, w, b, /*autocast_output=*/true);
  }
  REQUIRE(y16.dtype() == DType::BFloat16);
  // The float32 sum (bias included, in the epilogue) rounded once: within half a bfloat16 step of it.
  const auto a = y16.data().to_vector<double>(), r = y32.data().to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) REQUIRE(std::fabs(a[i] - r[i]) <= std::ldexp(std::fabs(r[i]), -8) + 1e-6);
  // The backward does not depend on the output's dtype: the same gradients, bit for bit.
  const Tensor gy = Tensor::randn({6, 24});
  y32.backward(gy);
  const Tensor gx = x.grad().clone(), gw = w.grad().clone(), gb = b.grad().clone();
  for (auto* v : {&x, &w, &b}) v->zero_grad();
  y16.backward(gy);
  CHECK(max_abs_diff(x.grad(), gx) == 0.0);
  CHECK(max_abs_diff(w.grad(), gw) == 0.0);
  CHECK(max_abs_diff(b.grad(), gb) == 0.0);
  // Without autocast the flag does nothing.
  CHECK(linear(x, w, b, true).dtype() == DType::Float32);

  // MultiheadAttention: q, k, v come out of their projections and the attention's result out of P·V in
  // bfloat16, so the only activation cast of a self-attention is its input's (the weights come cached).
  MultiheadAttention mha(32, 4);
  Variable h(Tensor::randn({2, 5, 32}), true);
  Tape::current().clear();
  Variable out;
  {
    AutocastGuard g(DType::BFloat16);
    out = mha(h * 1.0, h * 1.0, h * 1.0);
  }
  CHECK(out.dtype() == DType::Float32);
  const std::string tape = Tape::current().dump();
  size_t casts = 0;
  for (size_t p = tape.find("Cast {float32 -> bfloat16} <-"); p != std::string::npos;
       p = tape.find("Cast {float32 -> bfloat16} <-", p + 1))
    ++casts;
  CHECK(casts == 3);  // query, key and value are three distinct (equal) tensors here
  CHECK_THAT(tape, Contains("Attention"));
  out.backward(Tensor::randn({2, 5, 32}));
  REQUIRE(h.grad().dtype() == DType::Float32);
  CHECK(std::isfinite(norm2(h.grad())));
}

TEST_CASE("autocast: the attention (and a Linear) write the gradient of an input that arrived in bfloat16 in "
          "bfloat16, the float32 one rounded once",
          "[autocast]") {
  NL_SKIP_WITHOUT_ONEDNN();
  manual_seed(8);
  const Tensor q = Tensor::randn({2, 4, 6, 8}), k = Tensor::randn({2, 4, 7, 8}), v = Tensor::randn({2, 4, 7, 8});
  const Tensor gout = Tensor::randn({2, 4, 6, 8});
  AttentionOptions o;
  o.training = true;
  o.dropout = 0.2;
  // The same inputs twice: bfloat16 variables (as a projection with autocast_output gives them) and float32
  // ones holding the same values (cast inside the attention); the same dropout draws for both.
  Variable q16(q.to(DType::BFloat16), true), k16(k.to(DType::BFloat16), true), v16(v.to(DType::BFloat16), true);
  Variable q32(q16.data().to(DType::Float32), true), k32(k16.data().to(DType::Float32), true),
      v32(v16.data().to(DType::Float32), true);
  Variable a16, a32;
  {
    AutocastGuard g(DType::BFloat16);
    // non-leaves (a leaf's gradient takes the leaf's dtype whatever arrives)
    Variable qi = reshape(q16, q.shape()), ki = reshape(k16, k.shape()), vi = reshape(v16, v.shape());
    for (Variable* x : {&qi, &ki, &vi}) x->retain_grad();
    manual_seed(9);
    a16 = attention(qi, ki, vi, o);
    a16.backward(gout);
    for (Variable* x : {&qi, &ki, &vi}) REQUIRE(x->grad().dtype() == DType::BFloat16);
    manual_seed(9);
    a32 = attention(q32, k32, v32, o);
    a32.backward(gout);
    REQUIRE(q32.grad().dtype() == DType::Float32);
    CHECK(qi.grad().to_vector<float>() == q32.grad().to(DType::BFloat16).to_vector<float>());
    CHECK(ki.grad().to_vector<float>() == k32.grad().to(DType::BFloat16).to_vector<float>());
    CHECK(vi.grad().to_vector<float>() == v32.grad().to(DType::BFloat16).to_vector<float>());
  }
  CHECK(a16.data().to_vector<float>() == a32.data().to_vector<float>());

  // A Linear's input that arrived in bfloat16 (out_proj reading the attention's autocast_output) likewise.
  Variable w(Tensor::randn({5, 8}), true);
  const Tensor gy = Tensor::randn({2, 4, 6, 5});
  Variable x16(q.to(DType::BFloat16), true), x32(x16.data().to(DType::Float32), true);
  AutocastGuard g(DType::BFloat16);
  Variable xi = reshape(x16, q.shape());
  xi.retain_grad();
  linear(xi, w, Variable()).backward(gy);
  const Tensor gw16 = w.grad().clone();
  w.zero_grad();
  linear(x32, w, Variable()).backward(gy);
  REQUIRE(xi.grad().dtype() == DType::BFloat16);
  CHECK(xi.grad().to_vector<float>() == x32.grad().to(DType::BFloat16).to_vector<float>());
  CHECK(w.grad().to_vector<float>() == gw16.to_vector<float>());  // W's gradient unchanged (float32)

  // Two bfloat16 gradients of one tensor are summed in float32 (bfloat16 takes no elementwise op), and
  // flow on (and are retained) in float32.
  Variable xj = reshape(x16, q.shape());
  xj.retain_grad();
  add(linear(xj, w, Variable()), linear(xj, w, Variable())).backward(gy);
  REQUIRE(xj.grad().dtype() == DType::Float32);
  const Tensor one = xi.grad().to(DType::Float32);
  CHECK(xj.grad().to_vector<float>() == add(one, one).to_vector<float>());
}

TEST_CASE("autocast: a weight is cast once per update, however many products read it", "[autocast]") {
  NL_SKIP_WITHOUT_ONEDNN();
  manual_seed(7);
  clear_cast_cache();
  Variable w(Tensor::randn({8, 8}), true, "w");
  Adam opt({w});
  const Tensor x = Tensor::randn({4, 8});
  for (int step = 0; step < 3; ++step) {
    const size_t before = cast_cache_stats().casts;
    opt.zero_grad();
    Variable loss;
    {
      AutocastGuard g(DType::BFloat16);
      Variable h = linear(linear(linear(x, w, Variable()), w, Variable()), w, Variable());
      loss = sum(h * h);
    }
    loss.backward();
    opt.step();
    CHECK(cast_cache_stats().casts - before == 1);
    CHECK(w.data().dtype() == DType::Float32);  // master weight
    CHECK(w.grad().dtype() == DType::Float32);
  }
}

TEST_CASE("autocast: a Detach still stops the gradient", "[autocast]") {
  NL_SKIP_WITHOUT_ONEDNN();
  manual_seed(9);
  Variable w1(Tensor::randn({8, 8}), true, "w1"), w2(Tensor::randn({8, 8}), true, "w2");
  const Tensor x = Tensor::randn({4, 8});
  Tape::current().clear();
  Variable loss;
  {
    AutocastGuard g(DType::BFloat16);
    Variable h = linear(x, w1, Variable());
    loss = sum(linear(detach(h) + h * 0.0, w2, Variable()));
  }
  loss.backward();
  CHECK_THAT(Tape::current().dump(), Contains("[detach: gradient stops here]"));
  REQUIRE(w2.grad().defined());
  REQUIRE(w1.grad().defined());  // only through h * 0
  CHECK(max_abs_diff(w1.grad(), Tensor::zeros({8, 8})) == 0.0);
}

TEST_CASE("autocast: the policy table is what runs in a Transformer step, norms and loss see float32",
          "[autocast]") {
  NL_SKIP_WITHOUT_ONEDNN();
  manual_seed(11);
  TransformerModel m(step_config());
  m.train();
  Adam opt(m.parameters());
  AutocastTrace trace;
  opt.zero_grad();
  loss_and_backward(m, true, 1);
  opt.step();
  std::map<AutocastOp, std::set<DType>> seen;
  for (const auto& [op, dt] : trace.entries()) {
    INFO(autocast_rule(op).name << " ran in " << dtype_name(dt));
    CHECK(AutocastTrace::allowed(op, dt));
    seen[op].insert(dt);
  }
  // Every kind of op of a Transformer step ran, each in the table's dtype.
  for (AutocastOp op : {AutocastOp::Linear, AutocastOp::Attention, AutocastOp::FFN, AutocastOp::Gemm})
    CHECK(seen[op] == std::set<DType>{DType::BFloat16});
  for (AutocastOp op : {AutocastOp::Norm, AutocastOp::Softmax, AutocastOp::Optimizer})
    CHECK(seen[op] == std::set<DType>{DType::Float32});
  // The loss reads the vocabulary projection's bfloat16 logits as they are (float32 math in the kernel).
  CHECK(seen[AutocastOp::CrossEntropy] == std::set<DType>{DType::BFloat16});
  for (const Variable& p : m.parameters()) {
    CHECK(p.dtype() == DType::Float32);
    if (p.grad().defined()) CHECK(p.grad().dtype() == DType::Float32);
  }
}

TEST_CASE("autocast: a Transformer's loss and gradients match float32 within bfloat16 tolerance", "[autocast]") {
  NL_SKIP_WITHOUT_ONEDNN();
  manual_seed(13);
  TransformerModel m(step_config());
  m.train();
  const double l32 = loss_and_backward(m, false, 2);
  std::vector<Tensor> g32;
  for (const Variable& p : m.parameters()) g32.push_back(p.grad());
  for (Variable p : m.parameters()) p.zero_grad();
  const double l16 = loss_and_backward(m, true, 2);
  CHECK(std::fabs(l16 - l32) < 2e-2 * std::fabs(l32));
  // Per parameter, the error is measured against its own gradient's norm with a floor of 1% of the
  // model's typical parameter-gradient norm: the key projections' biases have a gradient of exactly 0
  // in exact arithmetic (softmax ignores a constant added to every key), so their float32 gradient is
  // rounding noise and a relative error to it means nothing. With 15 target tokens a few hidden units
  // that change sign under bfloat16 rounding move the lower layers' gradients by up to ~10% (the FFN op
  // itself is exact to its rounding points, tested below); the whole gradient was 4.2% from float32's.
  const auto ps = m.parameters();
  double num = 0, den = 0, mean_norm = 0;
  for (size_t i = 0; i < ps.size(); ++i) mean_norm += norm2(g32[i]) / ps.size();
  for (size_t i = 0; i < ps.size(); ++i) {
    INFO("parameter " << m.named_parameters()[i].first << " " << shape_str(ps[i].shape()));
    REQUIRE(ps[i].grad().dtype() == DType::Float32);
    const double e = norm2(sub(ps[i].grad(), g32[i]));
    CHECK(e < 0.15 * norm2(g32[i]) + 0.01 * mean_norm);
    num += e * e;
    den += norm2(g32[i]) * norm2(g32[i]);
  }
  CHECK(std::sqrt(num / den) < 6e-2);
}

TEST_CASE("autocast: the emulated CPU path (NORMLAB_BF16_FALLBACK=1) gives the native path's losses",
          "[autocast]") {
  NL_SKIP_WITHOUT_ONEDNN();
  auto run = [](bool fallback) {
    std::unique_ptr<EnvGuard> env = fallback ? std::make_unique<EnvGuard>("NORMLAB_BF16_FALLBACK", "1") : nullptr;
    clear_cast_cache();
    manual_seed(17);
    TransformerModel m(step_config());
    m.train();
    Adam opt(m.parameters(), AdamOptions{1e-2});
    std::vector<double> losses;
    for (int step = 0; step < 5; ++step) {
      opt.zero_grad();
      losses.push_back(loss_and_backward(m, true, 100 + step));
      opt.step();
    }
    return losses;
  };
  const auto native = run(false), emulated = run(true);
  for (size_t i = 0; i < native.size(); ++i) {
    INFO("step " << i);
    CHECK(std::fabs(native[i] - emulated[i]) < 1e-3 * std::fabs(native[i]));
  }
  CHECK(native.back() < native.front());
}

TEST_CASE("autocast: conv2d and matmul lower their products and keep float32 gradients", "[autocast]") {
  NL_SKIP_WITHOUT_ONEDNN();
  manual_seed(19);
  Variable x(Tensor::randn({2, 3, 6, 6}), true, "x"), w(Tensor::randn({4, 3, 3, 3}), true, "w"),
      b(Tensor::randn({4}), true, "b"), m2(Tensor::randn({5, 7}), true, "m");
  const Tensor gy = Tensor::randn({2, 4, 4, 4});
  auto run = [&](bool bf16) {
    for (Variable* v : {&x, &w, &b, &m2}) v->zero_grad();
    Variable y, z;
    {
      AutocastGuard g(DType::BFloat16, bf16);
      y = conv2d(x, w, b);
      z = matmul(slice(reshape(y, {-1, 8}), 1, 0, 5), m2);
    }
    CHECK(y.dtype() == DType::Float32);
    CHECK(z.dtype() == DType::Float32);
    (sum(y * Variable(gy)) + sum(z)).backward();
    return std::vector<Tensor>{y.data(), x.grad(), w.grad(), b.grad(), m2.grad()};
  };
  const auto f32 = run(false), b16 = run(true);
  for (size_t i = 0; i < f32.size(); ++i) {
    INFO("tensor " << i);
    CHECK(b16[i].dtype() == DType::Float32);
    CHECK(rel_err(b16[i], f32[i]) < 2e-2);
  }
}

TEST_CASE("autocast: ffn_relu is the float32 computation on bfloat16-rounded operands, forward and backward",
          "[autocast]") {
  NL_SKIP_WITHOUT_ONEDNN();
  manual_seed(23);
  const int64_t M = 37, D = 24, F = 40;
  Variable x(Tensor::randn({M, D}), true, "x"), w1(Tensor::randn({F, D}, 0.0, 0.3), true, "w1"),
      b1(Tensor::randn({F}), true, "b1"), w2(Tensor::randn({D, F}, 0.0, 0.3), true, "w2"),
      b2(Tensor::randn({D}), true, "b2");
  const Tensor gy = Tensor::randn({M, D});
  Variable y;
  {
    AutocastGuard g(DType::BFloat16);
    y = ffn_relu(x, w1, b1, w2, b2, 0.0, true, /*block_rows=*/16);  // several row blocks
  }
  REQUIRE(y.dtype() == DType::Float32);
  y.backward(gy);
  // Reference in float64, rounding to bfloat16 exactly where the op's products take their operands:
  // x, w1, w2, the activated hidden layer, the incoming gradient and the hidden layer's gradient.
  auto r64 = [](const Tensor& t) { return round_bf16(t.to(DType::Float32)).to(DType::Float64); };
  auto f64 = [](const Tensor& t) { return t.to(DType::Float64); };
  const Tensor xr = r64(x.data()), w1r = r64(w1.data()), w2r = r64(w2.data());
  const Tensor h = relu(add(matmul(xr, w1r.transpose(0, 1)), f64(b1.data())));
  const Tensor hr = r64(h);
  const Tensor yref = add(matmul(hr, w2r.transpose(0, 1)), f64(b2.data()));
  const Tensor gyr = r64(gy);
  const Tensor gh = mul(matmul(gyr, w2r), gt(hr, 0.0).to(DType::Float64));
  const Tensor ghr = r64(gh);
  // float32 accumulation of at most F terms: far below bfloat16's 2^-9, so a wrong rounding point shows.
  CHECK(rel_err(y.data(), yref) < 1e-5);
  CHECK(rel_err(w2.grad(), matmul(gyr.transpose(0, 1), hr)) < 1e-5);
  CHECK(rel_err(b2.grad(), sum(f64(gy), {0})) < 1e-5);
  CHECK(rel_err(b1.grad(), sum(gh, {0})) < 1e-5);
  CHECK(rel_err(w1.grad(), matmul(ghr.transpose(0, 1), xr)) < 1e-5);
  CHECK(rel_err(x.grad(), matmul(ghr, w1r)) < 1e-5);
}
