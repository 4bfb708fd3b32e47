// TransformerModel: incremental decoding equals the full decoder (source padding, beam reordering),
// fairseq's sinusoidal positions, shared embeddings counted once, init statistics and clear errors.
#include <cmath>
#include <set>

#include "optim/optimizer.h"
#include "transformer_test_util.h"

using namespace nl;
using namespace nltest;
using Catch::Matchers::Contains;

namespace {
TransformerConfig small_config(bool pre_norm, DType dtype, const std::string& norm = "layernorm") {
  TransformerConfig c = tiny_config(pre_norm, norm, dtype);
  c.d_model = 16;
  c.n_heads = 4;
  c.ffn_dim = 32;
  c.encoder_layers = c.decoder_layers = 2;
  c.src_vocab = 15;
  c.tgt_vocab = 13;
  return c;
}

// Logits row t of a [B, T, V] tensor as [B, 1, V].
Tensor at(const Tensor& logits, int64_t t) { return logits.slice(1, t, t + 1); }
}  // namespace

TEST_CASE("transformer: incremental decoding gives the full decoder's logits at every step, across a reorder",
          "[transformer]") {
  struct Case {
    bool pre;
    DType dtype;
    const char* norm;
    bool learned;
    double tol;
  };
  for (const Case& k : {Case{true, DType::Float32, "layernorm", false, 1e-5}, Case{false, DType::Float32, "layernorm", true, 1e-5},
                        Case{true, DType::Float64, "adanorm", false, 1e-12}, Case{false, DType::Float64, "none", true, 1e-12}}) {
    INFO((k.pre ? "pre" : "post") << "-norm " << dtype_name(k.dtype) << " " << k.norm << (k.learned ? " learned" : ""));
    manual_seed(31);
    TransformerConfig c = small_config(k.pre, k.dtype, k.norm);
    c.learned_pos = k.learned;
    c.dropout = 0.3;  // eval() must switch it off
    TransformerModel model(c);
    model.eval();
    const Tensor src = tokens({{1, 1, 5, 6, 7, 2}, {4, 5, 6, 7, 8, 2}, {9, 10, 2, 1, 1, 1}});  // left and right padding
    const Tensor prev = tokens({{2, 4, 5, 6, 7, 8, 9}, {2, 7, 7, 7, 3, 4, 5}, {2, 11, 12, 4, 3, 6, 7}});
    const int64_t T = prev.size(1), split = 3;
    EncoderOut enc = model.encode(src);
    const Tensor full = model.decode(prev, enc).data();
    REQUIRE(full.shape() == Shape{3, T, 13});

    IncrementalState state;
    for (int64_t t = 1; t <= split; ++t) {
      Variable step = model.decode(prev.slice(1, 0, t).contiguous(), enc, &state);
      REQUIRE(step.shape() == Shape{3, 1, 13});
      CHECK(max_abs_diff(step.data(), at(full, t - 1)) <= k.tol);
    }
    CHECK(state.steps() == split);
    // Beam-search style reorder with a permutation and a repeated row: B 3 -> 4.
    const Tensor order = Tensor::from_vector(std::vector<int64_t>{2, 0, 0, 1}, {4});
    state.reorder(order);
    EncoderOut enc2 = enc.index_select(order);
    const Tensor prev2 = index_select(prev, 0, order);
    const Tensor full2 = index_select(full, 0, order);
    for (int64_t t = split + 1; t <= T; ++t) {
      Variable step = model.decode(prev2.slice(1, 0, t).contiguous(), enc2, &state);
      CHECK(max_abs_diff(step.data(), at(full2, t - 1)) <= k.tol);
    }
    CHECK(state.steps() == T);
    CHECK_THROWS_WITH(model.decode(prev2, enc2, &state), Contains("holds 7 steps") && Contains("7 tokens"));
  }
}

TEST_CASE("transformer: sinusoidal positions are fairseq's", "[transformer]") {
  // fairseq get_embedding: emb = log(10000) / (half - 1); freq_i = exp(-i * emb);
  // row p = [sin(p freq_0..half-1), cos(p freq_0..half-1)]; row padding_idx = 0.
  const int64_t n = 7, dim = 8, half = 4, pad = 1;
  Tensor t = sinusoidal_table(n, dim, pad);
  auto w = vals(t);
  const double emb = std::log(10000.0) / double(half - 1);
  for (int64_t p = 0; p < n; ++p)
    for (int64_t i = 0; i < half; ++i) {
      const double a = p == pad ? 0.0 : double(p) * std::exp(double(i) * -emb);
      CHECK(w[p * dim + i] == Approx(p == pad ? 0.0 : std::sin(a)).margin(1e-15));
      CHECK(w[p * dim + half + i] == Approx(p == pad ? 0.0 : std::cos(a)).margin(1e-15));
    }
  // Known values: the first real position (2) at the fastest frequency, and 10000^(-1/3) at i = 1.
  CHECK(w[2 * dim + 0] == Approx(0.9092974268256817).margin(1e-15));   // sin(2)
  CHECK(w[2 * dim + 4] == Approx(-0.4161468365471424).margin(1e-15));  // cos(2)
  CHECK(w[2 * dim + 1] == Approx(std::sin(2.0 * std::pow(10000.0, -1.0 / 3.0))).margin(1e-15));
  CHECK(max_abs(t.select(0, pad)) == 0.0);
  // Odd dim: a zero column appended, as fairseq.
  Tensor odd = sinusoidal_table(4, 9, pad);
  CHECK(max_abs(odd.select(1, 8)) == 0.0);
  CHECK_THROWS_WITH(sinusoidal_table(4, 2, 1), Contains("dim >= 4"));
}

TEST_CASE("transformer: positions skip padding so left and right padding agree", "[transformer]") {
  const Tensor left = tokens({{1, 1, 5, 6, 7}}), right = tokens({{5, 6, 7, 1, 1}});
  CHECK(make_positions(left, 1).to_vector<int64_t>() == std::vector<int64_t>{1, 1, 2, 3, 4});
  CHECK(make_positions(right, 1).to_vector<int64_t>() == std::vector<int64_t>{2, 3, 4, 1, 1});
  SinusoidalPositionalEmbedding pe(8, 8, 1);
  Tensor e = pe.forward(make_positions(left, 1), DType::Float64).data();
  CHECK(max_abs(e.select(1, 0)) == 0.0);  // pads get the zero vector
  CHECK(max_abs(e.select(1, 1)) == 0.0);
  CHECK(max_abs(e.select(1, 2)) > 0.5);
  // The encoder sees the same tokens at the same positions either way.
  for (bool learned : {false, true}) {
    manual_seed(32);
    TransformerConfig c = small_config(true, DType::Float64);
    c.learned_pos = learned;
    TransformerEncoder enc(c);
    Tensor a = enc.forward(left).out.data().slice(1, 2, 5), b = enc.forward(right).out.data().slice(1, 0, 3);
    CHECK(max_abs_diff(a, b) < 1e-12);
  }
}

TEST_CASE("transformer: shared embeddings are one parameter counted once", "[transformer]") {
  // Hand count, d 8, ffn 16, vocab 12, one layer each, pre-norm (affine layernorm: 2d per norm).
  const int64_t d = 8, f = 16, V = 12;
  const int64_t attn = 4 * (d * d + d), ffn = d * f + f + f * d + d, norm = 2 * d;
  const int64_t body = (attn + ffn + 2 * norm) + (2 * attn + ffn + 3 * norm) + 2 * norm;
  struct Case {
    bool share_out, share_all;
    int64_t tables;
  };
  for (const Case& k : {Case{false, false, 3}, Case{true, false, 2}, Case{false, true, 1}, Case{true, true, 1}}) {
    INFO("share_decoder_input_output_embed " << k.share_out << " share_all_embeddings " << k.share_all);
    manual_seed(33);
    TransformerConfig c = tiny_config(true, "layernorm", DType::Float32);
    c.share_decoder_input_output_embed = k.share_out;
    c.share_all_embeddings = k.share_all;
    TransformerModel m(c);
    CHECK(m.num_parameters() == body + k.tables * V * d);
    auto named = m.named_parameters();
    CHECK(m.state_dict().size() == named.size());
    std::set<const void*> impls;
    for (auto& [n, p] : named) impls.insert(p.impl().get());
    CHECK(impls.size() == named.size());
    if (k.share_all) {
      CHECK(m.decoder->embed_tokens == m.encoder->embed_tokens);
      CHECK(m.state_dict().count("encoder.embed_tokens.weight") == 1);
      CHECK(m.state_dict().count("decoder.embed_tokens.weight") == 0);
    }
    if (k.share_out || k.share_all) {
      CHECK(m.decoder->output_weight.impl() == m.decoder->embed_tokens->weight.impl());
      CHECK(m.state_dict().count("decoder.output_projection.weight") == 0);
    }
  }
  // One SGD step moves the shared table by exactly lr * grad (once, not twice).
  manual_seed(34);
  TransformerConfig c = tiny_config(true, "layernorm", DType::Float64);
  c.share_all_embeddings = true;
  TransformerModel m(c);
  Variable loss = sum(m.forward(tokens({{4, 5, 2}}), tokens({{2, 6, 7}})));
  loss.backward();
  Tensor w0 = m.encoder->embed_tokens->weight.data().clone();
  Tensor g = m.encoder->embed_tokens->weight.grad().clone();
  CHECK(max_abs(g.select(0, 6)) > 0.0);  // a target-only token: its gradient comes from the decoder side
  SGDOptions so;
  so.lr = 0.5;
  SGD opt(m.parameters(), so);
  opt.step();
  CHECK(max_abs_diff(m.encoder->embed_tokens->weight.data(), sub(w0, mul(g, Tensor::scalar(0.5, DType::Float64)))) < 1e-15);
}

TEST_CASE("transformer: fairseq init statistics", "[transformer]") {
  manual_seed(35);
  TransformerConfig c;
  c.src_vocab = c.tgt_vocab = 2000;
  c.d_model = 64;
  c.n_heads = 4;
  c.ffn_dim = 128;
  c.encoder_layers = c.decoder_layers = 1;
  c.learned_pos = true;
  TransformerModel m(c);
  auto std_of = [](const Tensor& t) {
    auto v = vals(t);
    double s = 0, s2 = 0;
    for (double x : v) s += x, s2 += x * x;
    const double mu = s / double(v.size());
    return std::sqrt(s2 / double(v.size()) - mu * mu);
  };
  const double target = 1.0 / std::sqrt(64.0);
  for (const auto& w : {m.encoder->embed_tokens->weight, m.decoder->embed_tokens->weight, m.decoder->output_weight,
                        m.encoder->learned_positions->weight}) {
    INFO(w.name());
    CHECK(std_of(w.data()) == Approx(target).epsilon(0.03));
  }
  CHECK(max_abs(m.encoder->embed_tokens->weight.data().select(0, 1)) == 0.0);
  CHECK(max_abs(m.decoder->embed_tokens->weight.data().select(0, 1)) == 0.0);
  CHECK(max_abs(m.encoder->learned_positions->weight.data().select(0, 1)) == 0.0);
  CHECK(m.encoder->learned_positions->num_embeddings == 1024 + 1 + 1);
  // FFN: xavier_uniform (bound sqrt(6 / (64 + 128))) and zero bias.
  auto& fc1 = *m.encoder->layer_list[0]->fc1;
  CHECK(max_abs(fc1.weight.data()) <= std::sqrt(6.0 / 192.0));
  CHECK(max_abs(fc1.weight.data()) > 0.99 * std::sqrt(6.0 / 192.0));
  CHECK(max_abs(fc1.bias.data()) == 0.0);
  // Embeddings are scaled by sqrt(d): with no_scale_embedding the encoder input differs.
  CHECK(m.encoder->embed_scale == Approx(8.0));
}

TEST_CASE("transformer: validate names the bad field and the fix", "[transformer]") {
  auto base = [] { return tiny_config(true, "layernorm", DType::Float32); };
  auto expect = [](TransformerConfig c, const std::string& what) {
    INFO(what);
    CHECK_THROWS_WITH(c.validate(), Contains(what));
    CHECK_THROWS_AS(TransformerModel(c), std::invalid_argument);
  };
  REQUIRE_NOTHROW(base().validate());
  auto c = base();
  c.n_heads = 3;
  expect(c, "multiple of n_heads");
  c = base();
  c.share_all_embeddings = true;
  c.tgt_vocab = 20;
  expect(c, "src_vocab = 12 and tgt_vocab = 20");
  c = base();
  c.activation = "swish";
  expect(c, "unknown activation 'swish' (valid: relu, gelu)");
  c = base();
  c.norm = "notanorm";
  expect(c, "unknown norm 'notanorm'");
  c = base();
  c.decoder_norm = "batchnorm";  // --norm batchnorm alone is valid: it stays in the encoder
  expect(c, "pools statistics over the batch");
  c = base();
  c.norm_options = {{"C", 2.0}};  // C belongs to adanorm only
  expect(c, "unknown option 'C'");
  c = base();
  c.norm_placement = "middle";
  expect(c, "unknown norm_placement 'middle'");
  c = base();
  c.norm_placement = "final";
  c.normalize_before = false;
  expect(c, "exist only in pre-norm");
  c = base();
  c.tgt_vocab = 3;
  expect(c, "tgt_vocab must be >= 4");
  c = base();
  c.src_vocab = 2;
  expect(c, "src_vocab must be >= 4");
  c = base();
  c.max_source_positions = 0;
  expect(c, "max_source_positions must be >= 1");
  c = base();
  c.max_target_positions = 0;
  expect(c, "max_target_positions must be >= 1");
  c = base();
  c.dropout = 1.0;
  expect(c, "dropout must be in [0, 1)");
  c = base();
  c.attention_impl = "flash";
  expect(c, "unknown attention_impl 'flash'");
  c = base();
  c.d_model = 2;
  c.n_heads = 1;
  expect(c, "sinusoidal positions need d_model >= 4");
  c.learned_pos = true;
  CHECK_NOTHROW(c.validate());
  // An encoder alone ignores the target side.
  c = base();
  c.tgt_vocab = 0;
  CHECK_NOTHROW(TransformerEncoder(c));
  c.src_vocab = 0;
  CHECK_THROWS_WITH(TransformerEncoder(c), Contains("src_vocab must be >= 4"));
}

TEST_CASE("transformer: over-long inputs are clear errors", "[transformer]") {
  TransformerConfig c = tiny_config(true, "layernorm", DType::Float32);
  c.max_source_positions = 4;
  c.max_target_positions = 3;
  TransformerModel m(c);
  const Tensor ok_src = tokens({{4, 5, 6, 2}}), long_src = tokens({{4, 5, 6, 7, 2}});
  CHECK_NOTHROW(m.forward(ok_src, tokens({{2, 4, 5}})));
  CHECK_THROWS_WITH(m.forward(long_src, tokens({{2, 4}})),
                    Contains("source length 5 exceeds max_source_positions 4: raise --max-source-positions or filter "
                             "long sentences"));
  CHECK_THROWS_WITH(m.forward(ok_src, tokens({{2, 4, 5, 6}})),
                    Contains("target length 4 exceeds max_target_positions 3: raise --max-target-positions"));
  IncrementalState st;
  EncoderOut enc = m.encode(ok_src);
  for (int64_t t = 1; t <= 3; ++t) m.decode(tokens({{2, 4, 5}}).slice(1, 0, t).contiguous(), enc, &st);
  CHECK_THROWS_WITH(m.decode(tokens({{2, 4, 5, 6}}), enc, &st), Contains("exceeds max_target_positions 3"));
  CHECK_THROWS_WITH(m.encode(Tensor::zeros({1, 3})), Contains("source tokens must be int64 [B, T]"));
  CHECK_THROWS_WITH(m.decode(tokens({{2, 4}, {2, 5}}), enc), Contains("encoder output must be [B, S, D] with B = 2"));
}
