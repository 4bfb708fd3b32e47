#include "tasks/parse/parse_decode.h"

#include <chrono>
#include <limits>
#include <stdexcept>

#include "data/text/parser_features.h"

namespace nlapp {
using nl::data::ArcStandardState;
using nl::data::Move;

ParsedSplit greedy_parse(nl::ParserMlp& model, const ParserVocab& v, const std::vector<nl::data::ConlluSentence>& sents,
                         int64_t batch) {
  if (batch < 1) throw std::invalid_argument("greedy_parse: batch must be >= 1, got " + std::to_string(batch));
  const auto t0 = std::chrono::steady_clock::now();
  nl::NoGradGuard ng;
  const bool was = model.is_training();
  model.eval();
  const int32_t L = v.labels() - 1, C = v.classes();
  const int64_t F = nl::data::kParseFeatures;
  ParsedSplit out;
  out.heads.resize(sents.size());
  out.labels.resize(sents.size());
  int32_t f[nl::data::kParseFeatures];
  for (std::size_t b0 = 0; b0 < sents.size(); b0 += static_cast<std::size_t>(batch)) {
    const std::size_t b1 = std::min(sents.size(), b0 + static_cast<std::size_t>(batch));
    std::vector<EncodedSentence> enc;
    std::vector<ArcStandardState> st;
    for (std::size_t i = b0; i < b1; ++i) {
      enc.push_back(v.encode(sents[i]));
      st.emplace_back(static_cast<int>(sents[i].words.size()));
    }
    std::vector<std::size_t> active;
    for (std::size_t i = 0; i < st.size(); ++i)
      if (!st[i].terminal()) active.push_back(i);
    std::vector<int64_t> ids;
    while (!active.empty()) {
      ids.resize(active.size() * F);
      for (std::size_t a = 0; a < active.size(); ++a) {
        const std::size_t i = active[a];
        nl::data::parser_features(st[i], enc[i].words.data(), enc[i].tags.data(), f);
        std::copy(f, f + F, ids.begin() + static_cast<std::ptrdiff_t>(a * F));
      }
      const int64_t A = static_cast<int64_t>(active.size());
      const std::vector<float> scores =
          model(nl::Variable(nl::Tensor::from_vector(ids, {A, F}).to(model.device()))).data().to_vector<float>();
      std::vector<std::size_t> still;
      for (std::size_t a = 0; a < active.size(); ++a) {
        ArcStandardState& c = st[active[a]];
        const float* row = scores.data() + a * static_cast<std::size_t>(C);
        const bool legal[3] = {c.can_apply(Move::Shift), c.can_apply(Move::LeftArc), c.can_apply(Move::RightArc)};
        int32_t best = -1;
        float best_score = -std::numeric_limits<float>::infinity();
        for (int32_t k = 0; k < C; ++k) {
          const int m = k == 0 ? 0 : k <= L ? 1 : 2;
          if (legal[m] && (best < 0 || row[k] > best_score)) {
            best = k;
            best_score = row[k];
          }
        }
        // A non-terminal configuration always has a legal move, so best >= 0.
        const Move m = best == 0 ? Move::Shift : best <= L ? Move::LeftArc : Move::RightArc;
        c.apply(m, best == 0 ? 0 : best <= L ? best : best - L);
        if (!c.terminal()) still.push_back(active[a]);
      }
      active.swap(still);
    }
    for (std::size_t i = 0; i < st.size(); ++i) {
      const int n = st[i].n();
      auto& h = out.heads[b0 + i];
      auto& l = out.labels[b0 + i];
      for (int w = 1; w <= n; ++w) {
        h.push_back(st[i].head(w));
        l.push_back(v.label_names[static_cast<std::size_t>(st[i].label(w))]);
      }
    }
  }
  model.train(was);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

nl::metrics::AttachmentCounts score_parses(const std::vector<nl::data::ConlluSentence>& sents, const ParsedSplit& pred) {
  nl::metrics::AttachmentCounts total;
  for (std::size_t i = 0; i < sents.size(); ++i) {
    std::vector<std::string> gold_labels, upos, xpos;
    for (const auto& w : sents[i].words) {
      gold_labels.push_back(arc_label(w));
      upos.push_back(w.upos);
      xpos.push_back(w.xpos);
    }
    total += nl::metrics::attachment_counts(sents[i].heads(), gold_labels, pred.heads[i], pred.labels[i], upos, xpos);
  }
  return total;
}

}  // namespace nlapp
