#pragma once
// Corpus BLEU-4 on already tokenized text (Papineni et al. 2002, "BLEU: a Method for Automatic Evaluation
// of Machine Translation"), one reference per sentence, computed as multi-bleu.perl and
// `sacrebleu --tokenize none --smooth-method none` do:
//   p_n  = sum over sentences of clipped n-gram matches / sum of hypothesis n-grams   (n = 1..4)
//   BP   = 1 if c > r else exp(1 - r / c)   (c, r: total hypothesis / reference length in tokens)
//   BLEU = 100 * BP * exp(sum_n 0.25 * log p_n)       and 0 when any p_n is 0 or c is 0.
// Tokens are whitespace-separated; the case-insensitive variant lowercases both sides (utf8_lower) first,
// like multi-bleu.perl -lc / sacrebleu -lc.
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace nl::metrics {

/// Sufficient statistics of corpus BLEU (they add over sentences).
struct BleuStats {
  std::array<int64_t, 4> matches{};  ///< clipped n-gram matches, n = 1..4
  std::array<int64_t, 4> totals{};   ///< hypothesis n-grams, n = 1..4
  int64_t hyp_len = 0;               ///< c
  int64_t ref_len = 0;               ///< r
  BleuStats& operator+=(const BleuStats& o);
};

/// BLEU and its parts. `score` is in [0, 100]; `precisions` in percent.
struct BleuScore {
  double score = 0;
  std::array<double, 4> precisions{};
  double brevity_penalty = 0;
  double ratio = 0;  ///< c / r
  int64_t hyp_len = 0, ref_len = 0;
  /// "BLEU = 35.12, 68.1/42.0/28.3/19.5 (BP=1.000, ratio=1.012, hyp_len=..., ref_len=...)" (multi-bleu style)
  std::string to_string() const;
};

/// Statistics of one tokenized hypothesis against one tokenized reference.
BleuStats sentence_stats(const std::vector<std::string>& hyp, const std::vector<std::string>& ref);

/// BLEU from accumulated statistics (formula above).
BleuScore bleu_from_stats(const BleuStats& s);

/// Corpus BLEU of `hyps` against `refs` (one line each, whitespace-tokenized). `lowercase`: case-insensitive.
/// Throws std::invalid_argument naming both counts if the numbers of lines differ.
BleuScore corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                      bool lowercase = false);

/// corpus_bleu on two files (one sentence per line). Throws std::runtime_error naming both files and their
/// line counts when they differ (a hypothesis file must have one line per reference, empty lines included).
BleuScore corpus_bleu_files(const std::filesystem::path& hyp_path, const std::filesystem::path& ref_path,
                            bool lowercase = false);

}  // namespace nl::metrics
