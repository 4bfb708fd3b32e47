// The fused scaled-dot-product attention op (nl::attention): hand-computed values, equality with its
// composite twin (values and gradients), float64 gradchecks with masks and dropout, dropout statistics,
// argument errors, and what the graph keeps for backward.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

#include "autograd/functions.h"
#include "autograd/memory.h"
#include "backends/profiler.h"
#include "nn/nn_test_util.h"

using namespace nl;
using nltest::max_abs_diff;

namespace {
struct Shapes {
  int64_t B, H, Tq, Tk, dh, dv;
};

// Random masks for `s`: key padding on the last key of batch 0 and every key of batch 1 (a fully
// padded sequence), an additive mask with N(0, 1) entries and -inf on the anti-diagonal.
AttentionOptions random_masks(const Shapes& s, bool pad, bool amask, bool causal, DType dt) {
  AttentionOptions o;
  o.causal = causal;
  if (pad) {
    std::vector<double> m(static_cast<size_t>(s.B * s.Tk), 0.0);
    m[static_cast<size_t>(s.Tk - 1)] = 1.0;
    if (s.B > 1)
      for (int64_t j = 0; j < s.Tk; ++j) m[static_cast<size_t>(s.Tk + j)] = 3.0;  // any non-zero pads
    o.key_padding_mask = Tensor::from_vector(m, {s.B, s.Tk}).to(DType::Int64);
  }
  if (amask) {
    std::vector<double> a = Tensor::randn({s.Tq, s.Tk}, 0.0, 1.0, DType::Float64).to_vector<double>();
    for (int64_t i = 0; i < s.Tq; ++i) a[static_cast<size_t>(i * s.Tk + (s.Tk - 1 - i % s.Tk))] = -INFINITY;
    o.attn_mask = Tensor::from_vector(a, {s.Tq, s.Tk}).to(dt);
  }
  return o;
}

struct Run {
  Tensor out, gq, gk, gv;
};
// Forward + backward of `f` on fresh leaves copied from q, k, v; loss = sum(out * w).
Run run(const std::function<Variable(const Variable&, const Variable&, const Variable&)>& f, const Tensor& q,
        const Tensor& k, const Tensor& v, const Tensor& w) {
  Variable vq(q.clone(), true), vk(k.clone(), true), vv(v.clone(), true);
  Variable out = f(vq, vk, vv);
  sum(out * Variable(w)).backward();
  return {out.data(), vq.grad(), vk.grad(), vv.grad()};
}

void check_fused_equals_composite(const Shapes& s, DType dt, const AttentionOptions& o, double tol) {
  Tensor q = Tensor::randn({s.B, s.H, s.Tq, s.dh}, 0.0, 1.0, dt), k = Tensor::randn({s.B, s.H, s.Tk, s.dh}, 0.0, 1.0, dt);
  Tensor v = Tensor::randn({s.B, s.H, s.Tk, s.dv}, 0.0, 1.0, dt), w = Tensor::randn({s.B, s.H, s.Tq, s.dv}, 0.0, 1.0, dt);
  auto fused = [&](const Variable& a, const Variable& b, const Variable& c) { return attention(a, b, c, o); };
  auto comp = [&](const Variable& a, const Variable& b, const Variable& c) { return attention_composite(a, b, c, o); };
  manual_seed(11);  // the same dropout mask for both (same counter layout)
  Run f = run(fused, q, k, v, w);
  manual_seed(11);
  Run c = run(comp, q, k, v, w);
  CHECK(f.out.dtype() == dt);
  CHECK(max_abs_diff(f.out, c.out) < tol);
  CHECK(max_abs_diff(f.gq, c.gq) < tol);
  CHECK(max_abs_diff(f.gk, c.gk) < tol);
  CHECK(max_abs_diff(f.gv, c.gv) < tol);
}
}  // namespace

TEST_CASE("attention: hand-computed output with key padding and a causal mask", "[attention]") {
  // B = H = 1, Tq = Tk = 3, dh = 1, dv = 2, scale 1. Causal: query i sees keys j <= i. Key 0 is padding.
  //   query 0 sees only key 0, which is padded -> fully masked -> output [0, 0]
  //   query 1 sees key 1 only                  -> output v1 = [4, 8]
  //   query 2 (q = 1) sees keys 1, 2 with scores q*k = 0 and ln 3: weights 1/(1+3) = 1/4 and 3/4
  //     -> 1/4 * [4, 8] + 3/4 * [8, 0] = [1 + 6, 2 + 0] = [7, 2]
  // v0 = [100, -100] must never show up.
  Tensor q = Tensor::from_vector(std::vector<double>{5.0, -2.0, 1.0}, {1, 1, 3, 1});
  Tensor k = Tensor::from_vector(std::vector<double>{9.0, 0.0, std::log(3.0)}, {1, 1, 3, 1});
  Tensor v = Tensor::from_vector(std::vector<double>{100.0, -100.0, 4.0, 8.0, 8.0, 0.0}, {1, 1, 3, 2});
  AttentionOptions o;
  o.causal = true;
  o.scale = 1.0;
  o.key_padding_mask = Tensor::from_vector(std::vector<double>{1.0, 0.0, 0.0}, {1, 3});
  for (DType dt : {DType::Float32, DType::Float64}) {
    std::vector<double> got = attention(Variable(q.to(dt)), Variable(k.to(dt)), Variable(v.to(dt)), o).data().to_vector<double>();
    const std::vector<double> want{0.0, 0.0, 4.0, 8.0, 7.0, 2.0};
    for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-5));
  }
}

TEST_CASE("attention: a fully masked query row gives zero output and zero gradient", "[attention]") {
  manual_seed(3);
  AttentionOptions o;
  o.key_padding_mask = Tensor::from_vector(std::vector<double>{0.0, 0.0, 0.0, 1.0, 1.0, 1.0}, {2, 3});  // batch 1: all padding
  Variable q(Tensor::randn({2, 2, 4, 5}, 0.0, 1.0, DType::Float64), true);
  Variable k(Tensor::randn({2, 2, 3, 5}, 0.0, 1.0, DType::Float64), true);
  Variable v(Tensor::randn({2, 2, 3, 6}, 0.0, 1.0, DType::Float64), true);
  Variable out = attention(q, k, v, o);
  sum(out * out).backward();
  CHECK(nltest::max_abs(out.data().select(0, 1)) == 0.0);
  CHECK(nltest::max_abs(q.grad().select(0, 1)) == 0.0);
  CHECK(nltest::max_abs(k.grad().select(0, 1)) == 0.0);
  CHECK(nltest::max_abs(v.grad().select(0, 1)) == 0.0);
  CHECK(nltest::max_abs(out.data().select(0, 0)) > 0.0);  // batch 0 is untouched
  CHECK(nltest::max_abs(q.grad().select(0, 0)) > 0.0);
}

TEST_CASE("attention: fused equals composite in values and gradients", "[attention]") {
  const Shapes shapes[] = {{2, 3, 5, 5, 4, 4}, {2, 2, 3, 7, 8, 5}, {1, 1, 6, 4, 3, 2}, {2, 1, 1, 9, 4, 3}};
  for (DType dt : {DType::Float64, DType::Float32}) {
    const double tol = dt == DType::Float64 ? 1e-12 : 2e-5;
    for (const Shapes& s : shapes)
      for (int variant = 0; variant < 8; ++variant) {
        const bool pad = variant & 1, amask = variant & 2, causal = variant & 4;
        DYNAMIC_SECTION("dtype " << dtype_name(dt) << " shape " << s.B << "x" << s.H << "x" << s.Tq << "x" << s.Tk
                                 << " pad " << pad << " attn_mask " << amask << " causal " << causal) {
          check_fused_equals_composite(s, dt, random_masks(s, pad, amask, causal, dt), tol);
        }
      }
  }
}

TEST_CASE("attention: fused equals composite with dropout under the same seed", "[attention]") {
  const Shapes s{2, 2, 6, 5, 4, 3};
  for (DType dt : {DType::Float64, DType::Float32}) {
    AttentionOptions o = random_masks(s, true, true, true, dt);
    o.dropout = 0.3;
    o.training = true;
    check_fused_equals_composite(s, dt, o, dt == DType::Float64 ? 1e-12 : 2e-5);
  }
}

TEST_CASE("attention: fused equals composite on a large problem with threads", "[attention][threads2]") {
  // 2*4*64 rows of 64 keys: 32768 scores, enough for the row kernels' parallel loop.
  const Shapes s{2, 4, 64, 64, 16, 16};
  AttentionOptions o = random_masks(s, true, true, true, DType::Float32);
  o.dropout = 0.1;
  o.training = true;
  check_fused_equals_composite(s, DType::Float32, o, 2e-5);
}

TEST_CASE("attention: non-contiguous inputs (head-split views) work", "[attention]") {
  manual_seed(5);
  // [B, T, H, dh] transposed to [B, H, T, dh], as a multi-head layer produces them
  Tensor q = Tensor::randn({2, 5, 3, 4}, 0.0, 1.0, DType::Float64).transpose(1, 2);
  Tensor k = Tensor::randn({2, 6, 3, 4}, 0.0, 1.0, DType::Float64).transpose(1, 2);
  Tensor v = Tensor::randn({2, 6, 3, 2}, 0.0, 1.0, DType::Float64).transpose(1, 2);
  REQUIRE_FALSE(q.is_contiguous());
  AttentionOptions o;
  o.causal = true;
  Variable vq(q, true), vk(k, true), vv(v, true);
  Variable out = attention(vq, vk, vv, o);
  sum(out).backward();
  Variable cq(q.contiguous(), true), ck(k.contiguous(), true), cv(v.contiguous(), true);
  Variable ref = attention_composite(cq, ck, cv, o);
  sum(ref).backward();
  CHECK(max_abs_diff(out.data(), ref.data()) < 1e-12);
  CHECK(max_abs_diff(vq.grad(), cq.grad()) < 1e-12);
  CHECK(max_abs_diff(vk.grad(), ck.grad()) < 1e-12);
  CHECK(max_abs_diff(vv.grad(), cv.grad()) < 1e-12);
}

TEST_CASE("attention: float64 gradcheck with masks", "[attention]") {
  manual_seed(21);
  const Shapes s{2, 2, 4, 5, 3, 2};
  Variable q = nltest::leaf({s.B, s.H, s.Tq, s.dh}), k = nltest::leaf({s.B, s.H, s.Tk, s.dh});
  Variable v = nltest::leaf({s.B, s.H, s.Tk, s.dv});
  for (int variant = 0; variant < 2; ++variant) {
    AttentionOptions o = random_masks(s, true, true, variant == 1, DType::Float64);
    o.key_padding_mask = Tensor::from_vector(std::vector<double>{0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0}, {2, 5});
    NL_GRADCHECK([&](const std::vector<Variable>& in) { return attention(in[0], in[1], in[2], o); }, {q, k, v});
  }
}

TEST_CASE("attention: float64 gradcheck with dropout", "[attention]") {
  manual_seed(22);
  const Shapes s{1, 2, 4, 6, 3, 3};
  Variable q = nltest::leaf({s.B, s.H, s.Tq, s.dh}), k = nltest::leaf({s.B, s.H, s.Tk, s.dh});
  Variable v = nltest::leaf({s.B, s.H, s.Tk, s.dv});
  AttentionOptions o = random_masks(s, true, true, true, DType::Float64);
  o.dropout = 0.4;
  o.training = true;
  NL_GRADCHECK(
      [&](const std::vector<Variable>& in) {
        manual_seed(99);  // every evaluation draws the same mask
        return attention(in[0], in[1], in[2], o);
      },
      {q, k, v});
}

TEST_CASE("attention: dropout keeps the mean, drops about p of the weights, and is off in eval mode",
          "[attention]") {
  manual_seed(8);
  const int64_t Tq = 4, Tk = 8;
  // v = identity: the output rows are the (dropped) weights themselves
  Tensor eye = Tensor::zeros({1, 1, Tk, Tk}, DType::Float64);
  for (int64_t j = 0; j < Tk; ++j) eye.data<double>()[j * Tk + j] = 1.0;
  Variable q(Tensor::randn({1, 1, Tq, 5}, 0.0, 1.0, DType::Float64)), k(Tensor::randn({1, 1, Tk, 5}, 0.0, 1.0, DType::Float64));
  Variable v(eye);
  AttentionOptions o;
  o.dropout = 0.5;
  const std::vector<double> p = attention(q, k, v, o).data().to_vector<double>();  // training = false
  o.training = false;
  CHECK(max_abs_diff(attention(q, k, v, o).data(), Tensor::from_vector(p, {1, 1, Tq, Tk}).to(DType::Float64)) == 0.0);
  o.training = true;
  const int draws = 4000;
  std::vector<double> mean(p.size(), 0.0);
  int64_t zeros = 0;
  for (int d = 0; d < draws; ++d) {
    std::vector<double> y = attention(q, k, v, o).data().to_vector<double>();
    for (size_t i = 0; i < y.size(); ++i) {
      if (y[i] == 0.0) ++zeros;
      else CHECK(y[i] == Approx(2.0 * p[i]).epsilon(1e-12));  // kept weights are scaled by 1/(1-p)
      mean[i] += y[i] / draws;
    }
  }
  // fraction dropped ~ Binomial(4000 * 32, 0.5) / n: sd 0.0014
  CHECK(static_cast<double>(zeros) / (draws * static_cast<double>(p.size())) == Approx(0.5).margin(0.01));
  // E[y] = p; sd of the mean of 4000 draws of 2 p Bernoulli(0.5) is p / sqrt(4000) < 0.016 p
  for (size_t i = 0; i < p.size(); ++i) CHECK(mean[i] == Approx(p[i]).margin(0.08 * p[i] + 1e-12));
}

TEST_CASE("attention: bad shapes give invalid_argument naming the shapes", "[attention]") {
  auto t = [](const Shape& s) { return Variable(Tensor::zeros(s)); };
  AttentionOptions o;
  CHECK_THROWS_WITH(attention(t({2, 3, 4}), t({2, 3, 4, 8}), t({2, 3, 4, 8}), o),
                    Catch::Contains("[B, H, T, d]") && Catch::Contains("[2, 3, 4]"));
  CHECK_THROWS_WITH(attention(t({2, 3, 4, 8}), t({2, 3, 5, 7}), t({2, 3, 5, 8}), o),
                    Catch::Contains("shapes do not match") && Catch::Contains("[2, 3, 5, 7]"));
  CHECK_THROWS_WITH(attention(t({2, 3, 4, 8}), t({2, 3, 5, 8}), t({2, 3, 6, 8}), o),
                    Catch::Contains("[2, 3, 6, 8]"));
  CHECK_THROWS_AS(attention(t({2, 3, 4, 8}), t({1, 3, 5, 8}), t({1, 3, 5, 8}), o), std::invalid_argument);
  AttentionOptions bad_pad;
  bad_pad.key_padding_mask = Tensor::zeros({2, 4});
  CHECK_THROWS_WITH(attention(t({2, 3, 4, 8}), t({2, 3, 5, 8}), t({2, 3, 5, 8}), bad_pad),
                    Catch::Contains("key_padding_mask must be [B, Tk] = [2, 5]") && Catch::Contains("[2, 4]"));
  AttentionOptions bad_mask;
  bad_mask.attn_mask = Tensor::zeros({5, 4});
  CHECK_THROWS_WITH(attention(t({2, 3, 4, 8}), t({2, 3, 5, 8}), t({2, 3, 5, 8}), bad_mask),
                    Catch::Contains("attn_mask must be [Tq, Tk] = [4, 5]") && Catch::Contains("[5, 4]"));
  AttentionOptions bad_p;
  bad_p.dropout = 1.0;
  CHECK_THROWS_WITH(attention(t({1, 1, 2, 2}), t({1, 1, 2, 2}), t({1, 1, 2, 2}), bad_p), Catch::Contains("dropout"));
  CHECK_THROWS_WITH(attention(t({1, 1, 2, 2}), Variable(Tensor::zeros({1, 1, 2, 2}, DType::Float64)), t({1, 1, 2, 2}), o),
                    Catch::Contains("dtype"));
}

TEST_CASE("attention: empty extents give empty or zero outputs", "[attention]") {
  AttentionOptions o;
  Variable q(Tensor::ones({1, 2, 3, 4}), true), k(Tensor::ones({1, 2, 0, 4}), true), v(Tensor::ones({1, 2, 0, 5}), true);
  Variable out = attention(q, k, v, o);  // no keys: every row is fully masked
  CHECK(out.shape() == Shape{1, 2, 3, 5});
  CHECK(nltest::max_abs(out.data()) == 0.0);
  sum(out).backward();
  CHECK(nltest::max_abs(q.grad()) == 0.0);
}

TEST_CASE("attention: the fused graph keeps q, k, v and one weight tensor", "[attention][memory]") {
  manual_seed(4);
  const int64_t B = 4, H = 2, Tq = 16, Tk = 24, dh = 8, dv = 8;
  Variable q(Tensor::randn({B, H, Tq, dh}), true), k(Tensor::randn({B, H, Tk, dh}), true);
  Variable v(Tensor::randn({B, H, Tk, dv}), true);
  AttentionOptions o;
  o.key_padding_mask = Tensor::zeros({B, Tk});
  o.causal = true;
  o.dropout = 0.1;
  o.training = true;
  const size_t f = sizeof(float);
  const size_t qkv = (B * H * Tq * dh + B * H * Tk * dh + B * H * Tk * dv) * f;
  const size_t weights = B * H * Tq * Tk * f;  // one [B, H, Tq, Tk] tensor
  const size_t fused = graph_held_bytes(attention(q, k, v, o));
  CHECK(fused == qkv + weights);  // P; the dropout mask is regenerated, the masks are not needed
  const size_t composite = graph_held_bytes(attention_composite(q, k, v, o));
  // the composite keeps the softmax output and the dropped weights (2 such tensors; dropout itself
  // regenerates its mask) and the [B, 1, Tq, Tk] blocked mask
  INFO("composite " << composite << " fused " << fused << " one weight tensor " << weights);
  CHECK(composite == qkv + 2 * weights + B * Tq * Tk * f);
  CHECK(composite - fused == weights + B * Tq * Tk * f);
}

TEST_CASE("attention: the profiler times the whole op and counts its products as gemm", "[attention][profiler]") {
  manual_seed(5);
  Variable q(Tensor::randn({2, 2, 8, 4}), true), k(Tensor::randn({2, 2, 8, 4}), true), v(Tensor::randn({2, 2, 8, 4}), true);
  prof::reset();
  Variable out = attention(q, k, v, AttentionOptions{});  // profiling off: nothing is counted
  CHECK(prof::op_totals().at("attention") == 0.0);
  prof::enable(true);
  out = attention(q, k, v, AttentionOptions{});
  const double fwd = prof::op_totals().at("attention");
  sum(out).backward();
  prof::enable(false);
  const double both = prof::op_totals().at("attention");
  CHECK(fwd > 0.0);
  CHECK(both > fwd);  // backward adds to the same op
  CHECK(prof::totals().at("gemm") > 0.0);
  CHECK(prof::totals().at("gemm") <= both);  // the products ran inside the op
  // 2 products forward + 3 backward (dq, dk, dv) + dO Vᵀ, each 2 * B * H * 8 * 8 * 4 FLOPs
  CHECK(prof::gemm_flops() == Approx(6.0 * 2 * 2 * 2 * 8 * 8 * 4));
  prof::reset();
  CHECK(prof::op_totals().at("attention") == 0.0);
}
