#include "tasks/mt/mt_generate.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <span>
#include <stdexcept>

#include "data/text/batching.h"

namespace nlapp {

nl::GenerationOptions generation_options(const nlohmann::json& s) {
  nl::GenerationOptions o;
  o.beam = s.at("beam").get<int64_t>();
  o.lenpen = s.at("lenpen").get<double>();
  o.max_len_a = s.at("max_len_a").get<double>();
  o.max_len_b = s.at("max_len_b").get<int64_t>();
  return o;
}

Translations translate_ids(nl::TransformerModel& model, const MtCorpus& corpus,
                           const std::vector<std::vector<int32_t>>& sources, const nl::GenerationOptions& opts,
                           int64_t batch_size) {
  if (batch_size < 1) throw std::invalid_argument("--batch-size must be at least 1 (got " + std::to_string(batch_size) + ")");
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<size_t> order(sources.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sources[a].size() < sources[b].size(); });
  Translations out;
  out.text.resize(sources.size());
  out.best.resize(sources.size());
  for (size_t i = 0; i < order.size(); i += (size_t)batch_size) {
    const size_t n = std::min(order.size() - i, (size_t)batch_size);
    std::vector<std::span<const int32_t>> seqs;
    for (size_t j = 0; j < n; ++j) seqs.emplace_back(sources[order[i + j]]);
    auto tb = nl::data::collate_tokens(seqs, nl::data::Dictionary::kPad, false);
    auto hyps = nl::beam_search(model, nl::Tensor::from_vector(tb.ids, {tb.batch_size, tb.max_len}).to(model.device()), opts);
    for (size_t j = 0; j < n; ++j) {
      const size_t k = order[i + j];
      if (!hyps[j].empty()) out.best[k] = hyps[j][0];
      out.text[k] = corpus.detokenize(out.best[k].tokens);
    }
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

Translations translate_split(nl::TransformerModel& model, const MtCorpus& corpus, const std::string& split,
                             const nl::GenerationOptions& opts, int64_t batch_size) {
  const MtSplit& sp = corpus.split(split);
  std::vector<std::vector<int32_t>> src;
  src.reserve((size_t)sp.size());
  for (int64_t i = 0; i < sp.size(); ++i) {
    auto v = (*sp.src)[i];
    src.emplace_back(v.begin(), v.end());
  }
  return translate_ids(model, corpus, src, opts, batch_size);
}

}  // namespace nlapp
