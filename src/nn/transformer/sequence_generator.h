#pragma once
// Beam search for encoder-decoder models with incremental decoding, as fairseq's SequenceGenerator
// (Ott et al. 2019): at each step every live hypothesis is extended by every token; the best 2K
// candidates of each sentence are ranked; an end-of-sentence candidate among the first K is finished
// with the length-normalised score  sum(log p) / len^lenpen  (len counts the final </s>); the first K
// other candidates live on; a sentence stops once K hypotheses are finished; at the length limit every
// live hypothesis is ended with </s>. Beam 1 is greedy decoding.
#include <cstdint>
#include <vector>

#include "nn/transformer/transformer.h"

namespace nl {

/// Options of beam search (fairseq-generate's flag names).
struct GenerationOptions {
  int64_t beam = 5;          ///< K, hypotheses kept per sentence (1 = greedy; at most kMaxBeam)
  double lenpen = 1.0;       ///< length penalty exponent (fairseq --lenpen); < 1 favours short outputs
  double max_len_a = 0.0;    ///< the output may have at most max_len_a * source_length + max_len_b tokens
  int64_t max_len_b = 200;   ///< (both fairseq's defaults; also capped by the model's target positions)
  int64_t min_len = 1;       ///< no </s> before this many tokens
  double unk_penalty = 0.0;  ///< subtracted from <unk>'s log-probability (fairseq --unkpen)
  int64_t nbest = 1;         ///< hypotheses returned per sentence (<= beam)
  /// The largest beam accepted (as `normlab train mt --beam`): memory grows with beam x vocabulary.
  static constexpr int64_t kMaxBeam = 1000;
  /// Throws std::invalid_argument on beam outside [1, kMaxBeam], nbest outside [1, beam], a negative
  /// max_len_b or min_len, a negative or non-finite max_len_a, a non-finite lenpen or unk_penalty, and
  /// min_len above max_len_b when max_len_a is 0 (no output could be that long).
  void validate() const;
};

/// One finished translation.
struct Hypothesis {
  std::vector<int32_t> tokens;  ///< target ids without the final </s>
  double score = 0;             ///< sum of log-probabilities (natural log) / len^lenpen
  double log_prob = 0;          ///< sum of log-probabilities, </s> included
};

/// Translates src_tokens [B, S] (int64, padded with the model's padding_idx, each row ending in </s>)
/// and returns, per sentence, its nbest hypotheses best first. Runs in eval mode without gradients (the
/// model's training flag is restored). Throws std::invalid_argument on bad options (validate()), a
/// min_len above the model's max_target_positions - 1, or a source longer than the model's positions.
std::vector<std::vector<Hypothesis>> beam_search(TransformerModel& model, const Tensor& src_tokens,
                                                 const GenerationOptions& opts);

}  // namespace nl
