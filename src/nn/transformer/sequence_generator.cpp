#include "nn/transformer/sequence_generator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "autograd/tape.h"

namespace nl {

void GenerationOptions::validate() const {
  if (beam < 1 || beam > kMaxBeam)
    throw std::invalid_argument("--beam must be a whole number from 1 to " + std::to_string(kMaxBeam) + " (got " +
                                std::to_string(beam) + ")");
  if (nbest < 1 || nbest > beam)
    throw std::invalid_argument("--nbest must be between 1 and --beam " + std::to_string(beam) + " (got " +
                                std::to_string(nbest) + ")");
  if (max_len_b < 0 || min_len < 0 || !(max_len_a >= 0) || !std::isfinite(max_len_a) || !std::isfinite(lenpen) ||
      !std::isfinite(unk_penalty))
    throw std::invalid_argument("--max-len-a, --max-len-b and --min-len must be finite and >= 0, --lenpen and --unkpen "
                                "finite (got --max-len-a " + std::to_string(max_len_a) + ", --lenpen " +
                                std::to_string(lenpen) + ", --unkpen " + std::to_string(unk_penalty) + ")");
  if (max_len_a == 0 && min_len > max_len_b)
    throw std::invalid_argument("--min-len " + std::to_string(min_len) + " is above the maximum output length --max-len-b " +
                                std::to_string(max_len_b) + " (with --max-len-a 0): lower --min-len or raise --max-len-b");
}

namespace {
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct Candidate {
  double score;
  int64_t beam;   // which live hypothesis of the sentence it extends
  int32_t token;
};
}  // namespace

std::vector<std::vector<Hypothesis>> beam_search(TransformerModel& model, const Tensor& src_tokens,
                                                 const GenerationOptions& o) {
  o.validate();
  if (src_tokens.dim() != 2 || src_tokens.dtype() != DType::Int64)
    throw std::invalid_argument("beam_search: src_tokens must be int64 [B, S] (got " + shape_str(src_tokens.shape()) + ")");
  const auto& cfg = model.config();
  const int64_t B = src_tokens.size(0), S = src_tokens.size(1), K = o.beam, N = B * K;
  const int32_t pad = (int32_t)cfg.padding_idx, eos = 2, unk = 3;
  const Device dev = src_tokens.device();  // the search's index tensors go where the sources are
  if (o.min_len > cfg.max_target_positions - 1)
    throw std::invalid_argument("--min-len " + std::to_string(o.min_len) + " is above the model's longest output (" +
                                std::to_string(cfg.max_target_positions - 1) +
                                " tokens: its max_target_positions - 1); lower --min-len");
  NoGradGuard ng;
  const bool was_training = model.is_training();
  model.eval();

  // Per-sentence length limit (fairseq: max_len_a * src_len + max_len_b, capped by the positions).
  std::vector<int64_t> max_len(static_cast<size_t>(B));
  {
    Tensor src = src_tokens.to(Device::cpu()).contiguous();
    const int64_t* p = src.data<int64_t>();
    for (int64_t b = 0; b < B; ++b) {
      int64_t len = 0;
      for (int64_t s = 0; s < S; ++s) len += p[b * S + s] != pad;
      // In double, capped before the conversion: a huge max_len_a (1e30) must not overflow int64.
      max_len[(size_t)b] = (int64_t)std::min(std::floor(o.max_len_a * (double)len) + (double)o.max_len_b,
                                             (double)(cfg.max_target_positions - 1));
    }
  }
  const int64_t longest = *std::max_element(max_len.begin(), max_len.end());

  // Encode once, then repeat every sentence's encoder output K times: row b*K + k is beam k of sentence b.
  EncoderOut enc = model.encode(src_tokens);
  {
    std::vector<int64_t> rep(static_cast<size_t>(N));
    for (int64_t i = 0; i < N; ++i) rep[(size_t)i] = i / K;
    enc = enc.index_select(Tensor::from_vector(rep, {N}).to(dev));
  }
  IncrementalState state;
  std::vector<std::vector<int32_t>> tokens(static_cast<size_t>(N), std::vector<int32_t>{eos});
  std::vector<double> scores(static_cast<size_t>(N), 0.0);
  std::vector<std::vector<Hypothesis>> finalized(static_cast<size_t>(B));
  std::vector<bool> done(static_cast<size_t>(B), false);
  std::vector<Candidate> cand;

  for (int64_t step = 0; step <= longest; ++step) {
    // Decoder input: every row's tokens so far, [N, step + 1].
    std::vector<int64_t> prev(static_cast<size_t>(N * (step + 1)));
    for (int64_t r = 0; r < N; ++r)
      for (int64_t t = 0; t <= step; ++t) prev[(size_t)(r * (step + 1) + t)] = tokens[(size_t)r][(size_t)t];
    Variable logits = model.decode(Tensor::from_vector(prev, {N, step + 1}).to(dev), enc, &state);  // [N, 1, V]
    // Scores are ranked on the host: one copy of [N, V] log-probabilities per step.
    Tensor lp = log_softmax(logits.data().reshape({N, logits.size(-1)}).to(DType::Float32), -1).to(Device::cpu()).contiguous();
    const int64_t V = lp.size(1);
    const float* L = lp.data<float>();

    std::vector<int64_t> new_order(static_cast<size_t>(N));
    std::vector<std::vector<int32_t>> new_tokens(static_cast<size_t>(N));
    std::vector<double> new_scores(static_cast<size_t>(N));
    bool all_done = true;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t base = b * K;
      if (done[(size_t)b]) {  // keep the rows (the batch shape stays fixed); their output is ignored
        for (int64_t k = 0; k < K; ++k) {
          const size_t r = (size_t)(base + k);
          new_order[r] = base + k;
          new_tokens[r] = tokens[r];
          new_tokens[r].push_back(pad);
          new_scores[r] = scores[r];
        }
        continue;
      }
      const bool force_eos = step >= max_len[(size_t)b];
      auto adjusted = [&](int64_t row, int64_t v) -> double {
        if (force_eos) return v == eos ? (double)L[row * V + v] : kNegInf;
        if (v == pad) return kNegInf;
        if (v == eos && step < o.min_len) return kNegInf;
        double x = L[row * V + v];
        if (v == unk) x -= o.unk_penalty;
        return x;
      };
      // The best 2K candidates over (live beam, token); at step 0 all beams are equal: use beam 0 only.
      cand.clear();
      const int64_t beams = step == 0 ? 1 : K;
      for (int64_t k = 0; k < beams; ++k) {
        const int64_t row = base + k;
        for (int64_t v = 0; v < V; ++v) {
          const double x = adjusted(row, v);
          const double sc = scores[(size_t)row] + x;
          if (sc == kNegInf) continue;  // masked token or a dead row
          cand.push_back({sc, k, (int32_t)v});
        }
      }
      auto better = [](const Candidate& a, const Candidate& c) {
        if (a.score != c.score) return a.score > c.score;
        if (a.beam != c.beam) return a.beam < c.beam;
        return a.token < c.token;
      };
      const size_t keep = std::min(cand.size(), (size_t)(2 * K));
      std::partial_sort(cand.begin(), cand.begin() + (std::ptrdiff_t)keep, cand.end(), better);
      int64_t live = 0;
      for (size_t i = 0; i < keep; ++i) {
        const Candidate& c = cand[i];
        const size_t src_row = (size_t)(base + c.beam);
        if (c.token == eos) {
          if ((int64_t)i < K && (int64_t)finalized[(size_t)b].size() < K) {
            Hypothesis h;
            h.tokens.assign(tokens[src_row].begin() + 1, tokens[src_row].end());
            h.log_prob = c.score;
            h.score = c.score / std::pow((double)(step + 1), o.lenpen);
            finalized[(size_t)b].push_back(std::move(h));
          }
          continue;
        }
        if (live == K) continue;
        const size_t r = (size_t)(base + live);
        new_order[r] = base + c.beam;
        new_tokens[r] = tokens[src_row];
        new_tokens[r].push_back(c.token);
        new_scores[r] = c.score;
        ++live;
      }
      for (; live < K; ++live) {  // fewer than K live candidates (tiny vocabularies): pad with dead rows
        const size_t r = (size_t)(base + live);
        new_order[r] = base;
        new_tokens[r] = tokens[(size_t)base];
        new_tokens[r].push_back(pad);
        new_scores[r] = kNegInf;
      }
      if ((int64_t)finalized[(size_t)b].size() >= K || force_eos) done[(size_t)b] = true;
      all_done = all_done && done[(size_t)b];
    }
    if (all_done) break;
    tokens.swap(new_tokens);
    scores.swap(new_scores);
    state.reorder(Tensor::from_vector(new_order, {N}).to(dev));
  }
  model.train(was_training);

  std::vector<std::vector<Hypothesis>> out(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    auto& f = finalized[(size_t)b];
    std::stable_sort(f.begin(), f.end(), [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
    if ((int64_t)f.size() > o.nbest) f.resize((size_t)o.nbest);
    out[(size_t)b] = std::move(f);
  }
  return out;
}

}  // namespace nl
