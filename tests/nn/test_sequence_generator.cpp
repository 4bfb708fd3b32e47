// Beam search (nn/transformer/sequence_generator.h): beam 1 is greedy decoding, scores are the
// length-normalised log-probabilities of the returned tokens, and a tiny model learns to copy.
#include <cmath>
#include <limits>

#include "bf16_test_util.h"
#include "nn/transformer/sequence_generator.h"
#include "optim/optimizer.h"
#include "tensor/autocast.h"
#include "transformer_test_util.h"

using namespace nl;
using nltest::tiny_config;
using nltest::tokens;

namespace {
// Greedy decoding with the full (non-incremental) decoder: argmax over tokens other than <pad>.
std::vector<int32_t> greedy(TransformerModel& m, const Tensor& src, int64_t max_len) {
  NoGradGuard ng;
  EncoderOut enc = m.encode(src);
  std::vector<int64_t> prev{2};
  std::vector<int32_t> out;
  for (int64_t step = 0; step <= max_len; ++step) {
    Variable logits = m.decode(Tensor::from_vector(prev, {1, (int64_t)prev.size()}), enc);
    Tensor last = logits.data().select(1, (int64_t)prev.size() - 1).reshape({-1}).to(DType::Float64).contiguous();
    const double* p = last.data<double>();
    int32_t best = -1;
    for (int32_t v = 0; v < (int32_t)last.numel(); ++v)
      if (v != 1 && (best < 0 || p[v] > p[best])) best = v;
    if (step == max_len) best = 2;
    if (best == 2) break;
    out.push_back(best);
    prev.push_back(best);
  }
  return out;
}
// The beam tests' setting: a tiny model drawn with seed 4 (eval mode), two source sentences, beam 4
// over at most 6 target tokens, the best `nbest` kept.
TransformerConfig seeded_tiny_config(uint64_t seed) {
  manual_seed(seed);
  return tiny_config(true);
}
struct BeamSetup {
  TransformerModel m;
  Tensor src = tokens({{5, 6, 7, 2}, {8, 9, 2, 1}});
  GenerationOptions o;
  explicit BeamSetup(int64_t nbest) : m(seeded_tiny_config(4)) {
    m.eval();
    o.beam = 4;
    o.nbest = nbest;
    o.max_len_b = 6;
  }
};
}  // namespace

TEST_CASE("beam search: beam 1 equals greedy decoding", "[transformer][generate]") {
  manual_seed(3);
  auto cfg = tiny_config(true);
  cfg.max_target_positions = 12;
  TransformerModel m(cfg);
  m.eval();
  for (const auto& row : std::vector<std::vector<int64_t>>{{5, 6, 7, 2}, {9, 4, 2, 1}, {11, 2, 1, 1}}) {
    Tensor src = tokens({row});
    GenerationOptions o;
    o.beam = 1;
    o.max_len_b = 8;
    auto h = beam_search(m, src, o);
    REQUIRE(h.size() == 1);
    REQUIRE(h[0].size() == 1);
    CHECK(h[0][0].tokens == greedy(m, src, 8));
  }
}

TEST_CASE("beam search: scores are length-normalised log-probabilities, best first", "[transformer][generate]") {
  BeamSetup b4(4);
  TransformerModel& m = b4.m;
  const Tensor& src = b4.src;
  GenerationOptions& o = b4.o;
  o.lenpen = 1.0;
  auto hyps = beam_search(m, src, o);
  REQUIRE(hyps.size() == 2);
  for (int64_t b = 0; b < 2; ++b) {
    REQUIRE(hyps[(size_t)b].size() == 4);
    for (size_t i = 1; i < hyps[(size_t)b].size(); ++i) CHECK(hyps[(size_t)b][i - 1].score >= hyps[(size_t)b][i].score);
    // Re-score each hypothesis with the full decoder (teacher forcing): sum of log p, </s> included.
    for (const auto& h : hyps[(size_t)b]) {
      std::vector<int64_t> prev{2}, tgt;
      for (int32_t t : h.tokens) prev.push_back(t), tgt.push_back(t);
      tgt.push_back(2);
      NoGradGuard ng;
      Tensor row = src.select(0, b).reshape({1, -1});
      Variable lp = log_softmax(m.forward(row, Tensor::from_vector(prev, {1, (int64_t)prev.size()})), -1);
      Tensor l = lp.data().to(DType::Float64).contiguous();
      const int64_t V = l.size(2);
      double sum = 0;
      for (size_t t = 0; t < tgt.size(); ++t) sum += l.data<double>()[(int64_t)t * V + tgt[t]];
      CHECK(h.log_prob == Approx(sum).epsilon(1e-6));
      CHECK(h.score == Approx(sum / (double)tgt.size()).epsilon(1e-6));
    }
  }
}

TEST_CASE("beam search: bad options are clear errors", "[transformer][generate]") {
  TransformerModel m(tiny_config(true));
  GenerationOptions o;
  o.beam = 0;
  CHECK_THROWS_WITH(beam_search(m, tokens({{5, 2}}), o), Catch::Contains("--beam must be a whole number from 1 to 1000 (got 0)"));
  o.beam = 5000;  // capped as `normlab train mt --beam` is: one sentence at 5000 used 6.8 GB (issue 29)
  CHECK_THROWS_WITH(beam_search(m, tokens({{5, 2}}), o), Catch::Contains("from 1 to 1000 (got 5000)"));
  o.beam = 2;
  o.nbest = 3;
  CHECK_THROWS_WITH(beam_search(m, tokens({{5, 2}}), o), Catch::Contains("--nbest"));
}

TEST_CASE("beam search: non-finite options and contradictory length limits are clear errors", "[transformer][generate]") {
  TransformerModel m(tiny_config(true));  // max_target_positions 16: outputs of at most 15 tokens
  const Tensor src = tokens({{5, 2}});
  GenerationOptions o;
  o.unk_penalty = std::nan("");
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("--unkpen") && Catch::Contains("finite"));
  o.unk_penalty = 0;
  o.max_len_a = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(o.validate(), Catch::Contains("--max-len-a") && Catch::Contains("finite"));
  o.max_len_a = 0;
  o.min_len = 1000;
  o.max_len_b = 5;
  CHECK_THROWS_WITH(beam_search(m, src, o), Catch::Contains("--min-len 1000 is above the maximum output length --max-len-b 5"));
  o.max_len_a = 1;  // the limit grows with the source, but no output of this model is longer than 15 tokens
  CHECK_THROWS_WITH(beam_search(m, src, o), Catch::Contains("--min-len 1000 is above the model's longest output (15"));
}

TEST_CASE("beam search: a huge --max-len-a means the model's longest output, not an empty one", "[transformer][generate]") {
  BeamSetup b(1);
  b.o.max_len_b = 0;
  b.o.min_len = 15;  // no </s> before the model's last position: every output has 15 tokens
  b.o.max_len_a = 1e30;  // was converted to int64 with an overflow: every output was empty
  auto hyps = beam_search(b.m, b.src, b.o);
  REQUIRE(hyps.size() == 2);
  for (const auto& h : hyps) {
    REQUIRE(h.size() == 1);
    CHECK(h[0].tokens.size() == 15);
  }
}

TEST_CASE("a tiny Transformer learns to copy random sequences", "[transformer][generate][slow]") {
  manual_seed(7);
  TransformerConfig c = tiny_config(true, "layernorm", DType::Float32);
  c.d_model = 32;
  c.n_heads = 4;
  c.ffn_dim = 64;
  c.src_vocab = c.tgt_vocab = 14;  // specials 0-3, symbols 4-13
  c.share_all_embeddings = true;
  c.share_decoder_input_output_embed = true;
  TransformerModel m(c);
  AdamOptions ao;
  ao.lr = 3e-3;
  Adam opt(m.parameters(), ao);
  const int64_t B = 64, L = 5;
  auto batch = [&](uint64_t seed, Tensor* src, Tensor* prev, Tensor* tgt) {
    std::vector<int64_t> s, p, t;
    uint64_t x = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    for (int64_t b = 0; b < B; ++b) {
      std::vector<int64_t> row;
      for (int64_t i = 0; i < L; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        row.push_back(4 + (int64_t)((x >> 33) % 10));
      }
      for (auto v : row) s.push_back(v), t.push_back(v);
      s.push_back(2), t.push_back(2);
      p.push_back(2);
      for (auto v : row) p.push_back(v);
    }
    *src = Tensor::from_vector(s, {B, L + 1});
    *prev = Tensor::from_vector(p, {B, L + 1});
    *tgt = Tensor::from_vector(t, {B * (L + 1)});
  };
  for (int step = 0; step < 400; ++step) {
    Tensor s, p, t;
    batch((uint64_t)step, &s, &p, &t);
    opt.zero_grad();
    Variable logits = m.forward(s, p);
    cross_entropy(reshape(logits, {-1, 14}), t).backward();
    opt.step();
  }
  Tensor s, p, t;
  batch(100000, &s, &p, &t);
  GenerationOptions o;
  o.beam = 2;
  o.max_len_b = L + 2;
  auto hyps = beam_search(m, s, o);
  int exact = 0;
  for (int64_t b = 0; b < B; ++b) {
    std::vector<int32_t> want;
    for (int64_t i = 0; i < L; ++i) want.push_back((int32_t)s.to_vector<int64_t>()[(size_t)(b * (L + 1) + i)]);
    exact += hyps[(size_t)b][0].tokens == want;
  }
  INFO("exact matches: " << exact << " / " << B);
  CHECK(exact >= 0.95 * B);
}

TEST_CASE("beam search under autocast: the bfloat16 cached keys and values are reordered with the beams",
          "[transformer][generate][bf16]") {
  // Under --bf16 the decoder's q, k, v projections write bfloat16, so the incremental state a beam
  // reorders (index_select) holds bfloat16 tensors.
  NL_SKIP_WITHOUT_ONEDNN();
  BeamSetup b4(2);
  const std::vector<std::vector<Hypothesis>> h32 = beam_search(b4.m, b4.src, b4.o);
  std::vector<std::vector<Hypothesis>> h16;
  {
    AutocastGuard g(DType::BFloat16);
    h16 = beam_search(b4.m, b4.src, b4.o);
  }
  REQUIRE(h16.size() == 2);
  for (size_t b = 0; b < 2; ++b) {
    REQUIRE(h16[b].size() == 2);
    CHECK(h16[b][0].score >= h16[b][1].score);
    // bfloat16 products move the scores by far less than the gap between a tiny model's random tokens
    CHECK(std::isfinite(h16[b][0].score));
    CHECK(h16[b][0].score == Approx(h32[b][0].score).margin(0.05));
  }
}
