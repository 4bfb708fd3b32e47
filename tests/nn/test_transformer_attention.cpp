// MultiheadAttention: float64 gradchecks of both attention implementations (with key padding and a causal
// mask), fairseq's init, the k/v cache of incremental decoding, hooks and shape errors.
#include <cmath>

#include "transformer_test_util.h"

using namespace nl;
using namespace nltest;

namespace {
std::shared_ptr<MultiheadAttention> mha64(const std::string& impl, int64_t kdim = 0) {
  auto m = std::make_shared<MultiheadAttention>(8, 2, 0.0, true, kdim, kdim, impl);
  m->to(DType::Float64);
  return m;
}
}  // namespace

TEST_CASE("attention: MultiheadAttention gradcheck (float64) for both impls with padding and causal masks",
          "[transformer][gradcheck]") {
  for (const char* impl : {"fused", "composite"}) {
    for (bool causal : {false, true}) {
      INFO(impl << (causal ? " causal" : " padding"));
      manual_seed(3);
      auto m = mha64(impl, causal ? 0 : 6);
      Variable q = leaf({2, 3, 8});
      Variable kv = causal ? q : leaf({2, 4, 6});
      MhaOptions o;
      o.causal = causal;
      if (!causal) o.key_padding_mask = tokens({{0, 0, 0, 1}, {0, 1, 1, 1}});
      std::vector<Variable> in{q};
      if (!causal) in.push_back(kv);
      for (auto& p : m->parameters()) in.push_back(p);
      NL_GRADCHECK([&](const std::vector<Variable>& v) { return (*m)(v[0], causal ? v[0] : v[1], causal ? v[0] : v[1], o); },
                   in);
    }
  }
}

TEST_CASE("attention: padded keys get no weight and the output shape is [B, Tq, D]", "[transformer]") {
  manual_seed(4);
  auto m = mha64("fused");
  Variable q = leaf({1, 2, 8}), k = leaf({1, 3, 8});
  MhaOptions o;
  o.key_padding_mask = tokens({{0, 0, 1}});
  Variable y = (*m)(q, k, k, o);
  CHECK(y.shape() == Shape{1, 2, 8});
  // Changing the padded key changes nothing.
  Tensor k2 = k.data().clone();
  k2.select(1, 2).fill_(100.0);
  Variable y2 = (*m)(q, Variable(k2), Variable(k2), o);
  CHECK(max_abs_diff(y.data(), y2.data()) < 1e-12);
  // Without the mask it does.
  Variable y3 = (*m)(q, Variable(k2), Variable(k2));
  CHECK(max_abs_diff(y.data(), y3.data()) > 1e-3);
}

TEST_CASE("attention: fairseq init (xavier gain 1/sqrt 2 for q/k/v, xavier out_proj, zero out bias)", "[transformer]") {
  manual_seed(5);
  MultiheadAttention m(256, 4);
  auto bound = [](int64_t fi, int64_t fo, double gain) { return gain * std::sqrt(6.0 / double(fi + fo)); };
  auto max_of = [](const Variable& v) { return max_abs(v.data()); };
  for (auto* p : {&m.q_proj, &m.k_proj, &m.v_proj}) {
    const double b = bound(256, 256, 1.0 / std::sqrt(2.0));
    CHECK(max_of((*p)->weight) <= b);
    CHECK(max_of((*p)->weight) > 0.99 * b);
  }
  CHECK(max_of(m.out_proj->weight) > 0.99 * bound(256, 256, 1.0));
  CHECK(max_of(m.out_proj->weight) <= bound(256, 256, 1.0));
  CHECK(max_of(m.out_proj->bias) == 0.0);
  CHECK(max_of(m.q_proj->bias) > 0.0);  // fairseq keeps torch's default bias init for q/k/v
  // kdim != d_model: gain 1 (fairseq's qkv_same_dim == false).
  MultiheadAttention m2(8, 2, 0.0, true, 32, 32);
  CHECK(max_of(m2.k_proj->weight) > bound(32, 8, 1.0 / std::sqrt(2.0)));  // beyond the scaled bound: gain 1
  CHECK(max_of(m2.k_proj->weight) <= bound(32, 8, 1.0));
  CHECK(m2.k_proj->in_features == 32);
}

TEST_CASE("attention: the k/v cache gives the full causal pass step by step", "[transformer]") {
  manual_seed(6);
  auto m = mha64("fused");
  Variable x = leaf({2, 4, 8}), enc = leaf({2, 3, 8});
  Tensor enc_pad = tokens({{0, 0, 1}, {0, 0, 0}});
  MhaOptions full;
  full.causal = true;
  Tensor y_self = (*m)(x, x, x, full).data();
  MhaOptions fe;
  fe.key_padding_mask = enc_pad;
  Tensor y_enc = (*m)(x, enc, enc, fe).data();
  IncrementalState::Entry self_c, enc_c;
  for (int64_t t = 0; t < 4; ++t) {
    Variable xt = slice(x, 1, t, t + 1);
    MhaOptions so;
    so.causal = true;
    so.cache = &self_c;
    CHECK(max_abs_diff((*m)(xt, xt, xt, so).data(), y_self.slice(1, t, t + 1)) < 1e-12);
    MhaOptions eo;
    eo.key_padding_mask = enc_pad;
    eo.cache = &enc_c;
    eo.static_kv = true;
    // After the first step the encoder keys come from the cache (the key argument is ignored).
    Variable key = t == 0 ? enc : Variable();
    CHECK(max_abs_diff((*m)(xt, key, key, eo).data(), y_enc.slice(1, t, t + 1)) < 1e-12);
    CHECK(self_c.k.shape() == Shape{2, 2, t + 1, 4});
    CHECK(enc_c.k.shape() == Shape{2, 2, 3, 4});
  }
}

TEST_CASE("attention: hooks see query key value and bad shapes are named", "[transformer]") {
  auto m = mha64("composite");
  int calls = 0;
  size_t n_inputs = 0;
  m->register_forward_hook([&](Module&, const std::vector<Variable>& in, const Variable&) {
    ++calls;
    n_inputs = in.size();
  });
  Variable q = leaf({1, 2, 8});
  (*m)(q, q, q);
  CHECK(calls == 1);
  CHECK(n_inputs == 3);
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH((*m)(leaf({1, 2, 6}), q, q), Contains("query [B, Tq, 8]") && Contains("[1, 2, 6]"));
  CHECK_THROWS_WITH(MultiheadAttention(10, 4), Contains("multiple of n_heads"));
  CHECK_THROWS_WITH(MultiheadAttention(8, 2, 0.0, true, 0, 0, "flash"), Contains("'fused' or 'composite'"));
}
