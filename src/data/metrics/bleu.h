#pragma once
// Corpus BLEU-4 (Papineni et al. 2002, "BLEU: a Method for Automatic Evaluation of Machine Translation") as
// sacreBLEU 2.x computes it (Post 2018; sacrebleu/metrics/bleu.py, BLEU.compute_bleu), one or more references
// per sentence:
//   each segment: lowercase (optional), strip trailing whitespace, tokenize (13a or none), split on whitespace;
//   m_n, t_n = clipped n-gram matches / hypothesis n-grams summed over the corpus (n = 1..4; a hypothesis
//              n-gram is clipped by its largest count in any one reference);
//   c, r     = total hypothesis length / total closest reference length (per sentence the reference whose
//              length is nearest c_i, the shorter on a tie);
//   p_n      = 100 m_n / t_n; with smoothing "exp" (NIST / mteval-v13a, Chen & Cherry 2014 method 3) an order
//              with m_n = 0 gets p_n = 100 / (2^k t_n), k = 1, 2, ... counting such orders from n = 1;
//              with smoothing "none" it stays 0;
//   BP       = 1 if c >= r else exp(1 - r / c)  (0 if c = 0);
//   BLEU     = BP exp(sum_n 0.25 log p_n), which is 0 when any p_n = 0, any t_n = 0 or no n-gram matches.
// Defaults are sacreBLEU's (cased, tokenize 13a, smoothing exp). `tokenize none` + `smooth none` is
// multi-bleu.perl's number on already tokenized text (what fairseq reports for its BPE'd IWSLT14 corpora).
// Lowercasing uses nl::data::utf8_lower (the common Latin, Greek and Cyrillic capitals; sacreBLEU uses
// Python's full str.lower()).
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace nl::metrics {

/// How segments are split into tokens before counting n-grams.
enum class BleuTokenize {
  k13a,  ///< mteval-v13a tokenization (tokenizer_13a.h), sacreBLEU's default for raw text
  kNone  ///< whitespace only: for text that is already tokenized (e.g. fairseq's IWSLT14 after removing BPE)
};

/// What happens to an n-gram order without any match (formula above).
enum class BleuSmooth {
  kExp,  ///< sacreBLEU's default "exp": p_n = 100 / (2^k t_n)
  kNone  ///< p_n = 0, so BLEU = 0 (multi-bleu.perl)
};

/// Options of corpus BLEU; the defaults are sacreBLEU's.
struct BleuOptions {
  BleuTokenize tokenize = BleuTokenize::k13a;
  BleuSmooth smooth = BleuSmooth::kExp;
  bool lowercase = false;  ///< case-insensitive: lowercase both sides before tokenizing
};

/// "13a" | "none" -> BleuTokenize. Throws std::invalid_argument naming the value and the choices.
BleuTokenize parse_bleu_tokenize(std::string_view name);
/// "exp" | "none" -> BleuSmooth. Throws std::invalid_argument naming the value and the choices.
BleuSmooth parse_bleu_smooth(std::string_view name);

/// sacreBLEU's reproducibility signature for these options and `nrefs` references, e.g.
/// "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:normlab" (same keys and order as sacreBLEU 2.x).
std::string bleu_signature(const BleuOptions& opts, int nrefs);

/// The tokens BLEU counts in one segment: optional lowercase, trailing whitespace stripped, tokenized.
std::vector<std::string> bleu_tokens(std::string_view segment, const BleuOptions& opts);

/// Sufficient statistics of corpus BLEU (they add over sentences).
struct BleuStats {
  std::array<int64_t, 4> matches{};  ///< clipped n-gram matches, n = 1..4
  std::array<int64_t, 4> totals{};   ///< hypothesis n-grams, n = 1..4
  int64_t hyp_len = 0;               ///< c
  int64_t ref_len = 0;               ///< r
  BleuStats& operator+=(const BleuStats& o);
};

/// BLEU and its parts. `score` is in [0, 100]; `precisions` in percent, after smoothing (as sacreBLEU prints).
struct BleuScore {
  double score = 0;
  std::array<double, 4> precisions{};
  std::array<int64_t, 4> matches{}, totals{};  ///< the statistics the score came from
  double brevity_penalty = 0;
  double ratio = 0;  ///< c / r (0 when r = 0)
  int64_t hyp_len = 0, ref_len = 0;
  /// "BLEU = 35.12, 68.1/42.0/28.3/19.5 (BP=1.000, ratio=1.012, hyp_len=..., ref_len=...)" (multi-bleu style)
  std::string to_string() const;
};


/// Statistics of one tokenized hypothesis against several tokenized references (clipping by the largest
/// count in any reference, closest reference length). Throws std::invalid_argument when `refs` is empty.
BleuStats sentence_stats_multi(const std::vector<std::string>& hyp, const std::vector<std::vector<std::string>>& refs);

/// BLEU from accumulated statistics (formula above) with the given smoothing.
BleuScore bleu_from_stats(const BleuStats& s, BleuSmooth smooth = BleuSmooth::kExp);

/// Corpus BLEU of `hyps` against `refs` (one segment each). Throws std::invalid_argument naming both counts
/// if the numbers of lines differ.
BleuScore corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                      const BleuOptions& opts = {});

/// Corpus BLEU against several reference streams (`ref_streams[k][i]`: the k-th reference of segment i), as
/// sacreBLEU's corpus_bleu(hyps, [refs1, refs2, ...]). Throws std::invalid_argument when there is no stream
/// or a stream's length differs from the number of hypotheses (naming the stream and both counts).
BleuScore corpus_bleu_multi(const std::vector<std::string>& hyps,
                            const std::vector<std::vector<std::string>>& ref_streams, const BleuOptions& opts = {});

/// corpus_bleu on two files (one sentence per line). Throws std::runtime_error naming both files and their
/// line counts when they differ (a hypothesis file must have one line per reference, empty lines included).
BleuScore corpus_bleu_files(const std::filesystem::path& hyp_path, const std::filesystem::path& ref_path,
                            const BleuOptions& opts = {});

}  // namespace nl::metrics
