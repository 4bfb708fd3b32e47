#pragma once
// Batched translation of many sentences with beam search (nn/transformer/sequence_generator.h), as
// fairseq-generate and fairseq-interactive do: sentences are sorted by source length into batches,
// translated, detokenised and returned in their original order.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nn/transformer/sequence_generator.h"
#include "tasks/mt/mt_corpus.h"

namespace nlapp {

/// Detokenised best hypotheses, one per input sentence in input order, and the time taken.
struct Translations {
  std::vector<std::string> text;
  std::vector<nl::Hypothesis> best;
  double seconds = 0;
  double sentences_per_second() const { return seconds > 0 ? (double)text.size() / seconds : 0; }
};

/// Beam-search options from resolved mt settings (beam, lenpen, max_len_a, max_len_b).
nl::GenerationOptions generation_options(const nlohmann::json& settings);

/// Translates source id sequences (each ending in </s>) in batches of at most `batch_size` sentences.
/// Throws std::invalid_argument on batch_size < 1 and what beam_search throws.
Translations translate_ids(nl::TransformerModel& model, const MtCorpus& corpus,
                           const std::vector<std::vector<int32_t>>& sources, const nl::GenerationOptions& opts,
                           int64_t batch_size);

/// Translates every sentence of a prepared split ("valid", "test").
Translations translate_split(nl::TransformerModel& model, const MtCorpus& corpus, const std::string& split,
                             const nl::GenerationOptions& opts, int64_t batch_size);

}  // namespace nlapp
