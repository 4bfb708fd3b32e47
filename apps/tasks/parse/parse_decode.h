#pragma once
// Greedy arc-standard decoding with the transition classifier (Chen & Manning 2014, §3.2): at each
// step the highest-scoring LEGAL transition is applied; many sentences advance together so that one
// forward pass scores one configuration of each unfinished sentence. Scoring with UAS/LAS without
// punctuation (data/metrics/attachment.h).
#include <cstdint>
#include <string>
#include <vector>

#include "data/metrics/attachment.h"
#include "nn/models/parser_mlp.h"
#include "tasks/parse/parse_data.h"

namespace nlapp {

/// Predicted trees of a split and the parsing time.
struct ParsedSplit {
  std::vector<std::vector<int>> heads;           ///< per sentence, per word (0 = ROOT)
  std::vector<std::vector<std::string>> labels;  ///< per sentence, per word
  double seconds = 0;                            ///< wall time of feature extraction + scoring + transitions
};

/// Parses every sentence of `sents` greedily with `model` (put in eval mode and without gradients for
/// the call, its mode restored after), `batch` sentences at a time. Throws std::invalid_argument on
/// batch < 1.
ParsedSplit greedy_parse(nl::ParserMlp& model, const ParserVocab& v, const std::vector<nl::data::ConlluSentence>& sents,
                         int64_t batch);

/// UAS/LAS counts of `pred` against the gold trees of `sents` (punctuation by gold tags excluded).
nl::metrics::AttachmentCounts score_parses(const std::vector<nl::data::ConlluSentence>& sents, const ParsedSplit& pred);

}  // namespace nlapp
