// Transformer-XL pieces (src/nn/transformer/rel_attention.h, xl_model.h): the relative shift on known
// values, the relative attention against a direct O(T^2) computation of Dai et al.'s score, a float64
// gradcheck with memory, and the segment memory: segmented evaluation with a long enough memory equals
// one pass over the whole sequence, and a one-layer model sees exactly mem_len + (offset + 1) positions.
#include <cmath>

#include "nn/transformer/xl_model.h"
#include "transformer_test_util.h"

using namespace nl;
using namespace nltest;

namespace {
XLConfig tiny_xl(bool pre_norm, int64_t layers, int64_t mem_len, const std::string& norm = "layernorm") {
  XLConfig c;
  c.base = tiny_config(pre_norm, norm);
  c.base.decoder_layers = layers;
  c.base.decoder_norm = norm;
  c.d_head = 3;
  c.mem_len = mem_len;
  return c;
}
// Logits of `ids` [1, n] fed in segments of length T with the memory carried.
std::vector<double> segmented(XLModel& m, const std::vector<int64_t>& ids, int64_t T, int64_t mem_len) {
  std::vector<Tensor> mem;
  std::vector<double> out;
  for (size_t s = 0; s < ids.size(); s += (size_t)T) {
    std::vector<int64_t> seg(ids.begin() + (long)s, ids.begin() + (long)std::min(ids.size(), s + (size_t)T));
    XLOutput o = m.forward(tokens({seg}), mem, {}, mem_len);
    mem = o.memory;
    auto v = vals(o.logits.data());
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}
}  // namespace

TEST_CASE("xl: rel_shift moves row i left by Tq - 1 - i (known values)", "[transformer][xl]") {
  // x [Tq = 2, K = 3]: after the shift out[i, j] = x[i, j + 1 - i] for j <= i + 1.
  Tensor x = Tensor::from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
  auto y = vals(rel_shift(Variable(x)).data());
  CHECK(y[0] == 2);  // out[0,0] = x[0,1]
  CHECK(y[1] == 3);  // out[0,1] = x[0,2]
  CHECK(y[3] == 4);  // out[1,0] = x[1,0]
  CHECK(y[4] == 5);
  CHECK(y[5] == 6);
  CHECK_THROWS_WITH(rel_shift(Variable(Tensor::zeros({3, 2}))), Catch::Contains("K >= Tq"));
  // Positions: row c is distance K - 1 - c; the last row is distance 0 = [0..0, 1..1].
  auto p = vals(xl_relative_positions(3, 4, DType::Float64));
  CHECK(p[8] == 0);
  CHECK(p[10] == 1);
  CHECK(p[0] == Approx(std::sin(2.0)));
  CHECK(p[1] == Approx(std::sin(2.0 * std::pow(10000.0, -0.5))));
  CHECK(p[2] == Approx(std::cos(2.0)));
}

TEST_CASE("xl: relative attention equals a direct O(T^2) computation of the XL score", "[transformer][xl]") {
  manual_seed(11);
  const int64_t B = 2, T = 3, M = 2, D = 8, H = 2, dh = 3, K = M + T;
  RelMultiheadAttention a(D, H, dh, 0.0);
  a.to(DType::Float64);
  Variable h = leaf({B, T, D}), mem = leaf({B, M, D}), u = leaf({H, dh}), v = leaf({H, dh});
  Variable pos(xl_relative_positions(K, D, DType::Float64));
  auto y = vals(a.forward(h, mem, pos, u, v).data());
  // Direct: q = Wq h_i, k/v = Wkv [m; h]_j, r_d = Wr R_d (R_d = row K-1-d of pos).
  auto W = [](const std::shared_ptr<Linear>& l) { return vals(l->weight.data()); };
  auto wq = W(a.q_net), wkv = W(a.kv_net), wr = W(a.r_net), wo = W(a.o_net);
  auto hv = vals(h.data()), mv = vals(mem.data()), pv = vals(pos.data()), uv = vals(u.data()), vv = vals(v.data());
  auto state = [&](int64_t b, int64_t j, int64_t e) {  // [m; h][b, j, e]
    return j < M ? mv[(size_t)((b * M + j) * D + e)] : hv[(size_t)((b * T + j - M) * D + e)];
  };
  auto proj = [&](const std::vector<double>& w, int64_t row, auto&& x) {
    double s = 0;
    for (int64_t e = 0; e < D; ++e) s += w[(size_t)(row * D + e)] * x(e);
    return s;
  };
  double worst = 0;
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> heads((size_t)(T * H * dh));
    for (int64_t n = 0; n < H; ++n)
      for (int64_t i = 0; i < T; ++i) {
        std::vector<double> score(K, -INFINITY);
        for (int64_t j = 0; j <= M + i; ++j) {
          const int64_t d = M + i - j;  // the distance
          double s = 0;
          for (int64_t c = 0; c < dh; ++c) {
            const int64_t r = n * dh + c;
            const double q = proj(wq, r, [&](int64_t e) { return state(b, M + i, e); });
            const double k = proj(wkv, r, [&](int64_t e) { return state(b, j, e); });
            const double rr = proj(wr, r, [&](int64_t e) { return pv[(size_t)((K - 1 - d) * D + e)]; });
            s += (q + uv[(size_t)r]) * k + (q + vv[(size_t)r]) * rr;
          }
          score[(size_t)j] = s / std::sqrt((double)dh);
        }
        double mx = -INFINITY, z = 0;
        for (double s : score) mx = std::max(mx, s);
        for (double s : score) z += std::exp(s - mx);
        for (int64_t c = 0; c < dh; ++c) {
          const int64_t r = H * dh + n * dh + c;  // value rows follow the key rows in kv_net
          double acc = 0;
          for (int64_t j = 0; j <= M + i; ++j)
            acc += std::exp(score[(size_t)j] - mx) / z * proj(wkv, r, [&](int64_t e) { return state(b, j, e); });
          heads[(size_t)(i * H * dh + n * dh + c)] = acc;
        }
      }
    for (int64_t i = 0; i < T; ++i)
      for (int64_t o = 0; o < D; ++o) {
        double s = 0;
        for (int64_t r = 0; r < H * dh; ++r) s += wo[(size_t)(o * H * dh + r)] * heads[(size_t)(i * H * dh + r)];
        worst = std::max(worst, std::abs(s - y[(size_t)((b * T + i) * D + o)]));
      }
  }
  CHECK(worst < 1e-12);
}

TEST_CASE("xl: relative attention gradcheck (float64) with memory", "[transformer][xl][gradcheck]") {
  manual_seed(12);
  RelMultiheadAttention a(8, 2, 3, 0.0);
  a.to(DType::Float64);
  Variable pos(xl_relative_positions(5, 8, DType::Float64), true);
  std::vector<Variable> in{leaf({2, 3, 8}), leaf({2, 2, 8}), pos, leaf({2, 3}), leaf({2, 3})};
  for (auto& p : a.parameters()) in.push_back(p);
  NL_GRADCHECK([&](const std::vector<Variable>& x) { return a.forward(x[0], x[1], x[2], x[3], x[4]); }, in);
}

TEST_CASE("xl: segments with a long enough memory equal one pass over the whole sequence", "[transformer][xl]") {
  const std::vector<int64_t> ids = {4, 7, 5, 9, 11, 6, 8, 4, 10, 5, 7, 9};
  for (bool pre : {false, true}) {
    INFO((pre ? "pre-norm" : "post-norm"));
    manual_seed(13);
    XLModel m(tiny_xl(pre, 2, 12));
    m.eval();
    NoGradGuard ng;
    auto full = vals(m.forward(tokens({ids}), {}, {}, 0).logits.data());
    auto seg = segmented(m, ids, 4, 12);
    REQUIRE(seg.size() == full.size());
    double worst = 0;
    for (size_t i = 0; i < seg.size(); ++i) worst = std::max(worst, std::abs(seg[i] - full[i]));
    CHECK(worst < 1e-10);
    // A memory shorter than the context changes the later segments.
    auto short_mem = segmented(m, ids, 4, 2);
    double diff = 0;
    for (size_t i = 4 * 12; i < seg.size(); ++i) diff = std::max(diff, std::abs(short_mem[i] - full[i]));
    CHECK(diff > 1e-6);
  }
}

TEST_CASE("xl: one layer sees exactly mem_len + offset + 1 positions (perturbation)", "[transformer][xl]") {
  // T = 3, mem_len = 4: the output at position t = 3 s + i sees the inputs [3 s - 4, t].
  manual_seed(14);
  XLModel m(tiny_xl(false, 1, 4));
  m.eval();
  NoGradGuard ng;
  std::vector<int64_t> ids = {4, 5, 6, 7, 8, 9, 10, 11, 4, 5, 6, 7};
  const int64_t T = 3, M = 4, V = 12;
  const auto base = segmented(m, ids, T, M);
  auto changed = [&](size_t pos, int64_t t) {
    std::vector<int64_t> p = ids;
    p[pos] = p[pos] == 4 ? 5 : 4;
    auto o = segmented(m, p, T, M);
    double d = 0;
    for (int64_t v = 0; v < V; ++v) d = std::max(d, std::abs(o[(size_t)(t * V + v)] - base[(size_t)(t * V + v)]));
    return d > 1e-9;
  };
  for (int64_t t : {9, 10, 11}) {  // segment 3 (columns 9..11): span starts at 9 - 4 = 5
    INFO("t = " << t);
    CHECK(changed(5, t));
    CHECK_FALSE(changed(4, t));
    CHECK(changed((size_t)t, t));
    if (t < 11) CHECK_FALSE(changed((size_t)t + 1, t));  // causal
  }
  // The memory holds the last mem_len inputs of each layer.
  XLOutput o = m.forward(tokens({{4, 5, 6}}));
  REQUIRE(o.memory.size() == 1);
  CHECK(o.memory[0].shape() == Shape{1, 3, 8});
  CHECK(m.forward(tokens({{4, 5, 6}}), o.memory).memory[0].shape() == Shape{1, 4, 8});
  CHECK_THROWS_WITH(m.forward(tokens({{4, 5}, {6, 7}}), o.memory), Catch::Contains("reset the memory"));
}

TEST_CASE("xl: a batch-statistic norm in the LM needs allow_decoder_batch_stats", "[transformer][xl]") {
  CHECK_THROWS_WITH(XLModel(tiny_xl(false, 1, 0, "batchnorm")), Catch::Contains("--allow-decoder-batch-stats"));
  XLConfig c = tiny_xl(false, 1, 0, "batchnorm");
  c.base.allow_decoder_batch_stats = true;
  XLModel m(c);
  CHECK(m.forward(tokens({{4, 5, 6}})).logits.shape() == Shape{1, 3, 12});
}
