#include "data/metrics/bleu.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "data/metrics/tokenizer_13a.h"
#include "data/text/line_reader.h"
#include "data/text/utf8.h"

namespace nl::metrics {

BleuStats& BleuStats::operator+=(const BleuStats& o) {
  for (int n = 0; n < 4; ++n) {
    matches[n] += o.matches[n];
    totals[n] += o.totals[n];
  }
  hyp_len += o.hyp_len;
  ref_len += o.ref_len;
  return *this;
}

namespace {
using NgramCounts = std::map<std::vector<std::string>, int64_t>;
NgramCounts count_ngrams(const std::vector<std::string>& t, std::size_t n) {
  NgramCounts c;
  for (std::size_t i = 0; i + n <= t.size(); ++i) ++c[std::vector<std::string>(t.begin() + static_cast<std::ptrdiff_t>(i), t.begin() + static_cast<std::ptrdiff_t>(i + n))];
  return c;
}

// sacreBLEU's _get_closest_ref_len: the reference length nearest `hyp_len`, the shorter one on a tie.
int64_t closest_ref_len(int64_t hyp_len, const std::vector<std::vector<std::string>>& refs) {
  int64_t best = -1, best_diff = -1;
  for (const auto& r : refs) {
    const auto len = static_cast<int64_t>(r.size());
    const int64_t diff = std::abs(hyp_len - len);
    if (best_diff < 0 || diff < best_diff || (diff == best_diff && len < best)) {
      best_diff = diff;
      best = len;
    }
  }
  return best;
}
}  // namespace

BleuTokenize parse_bleu_tokenize(std::string_view name) {
  if (name == "13a") return BleuTokenize::k13a;
  if (name == "none") return BleuTokenize::kNone;
  throw std::invalid_argument("BLEU: unknown tokenizer '" + std::string(name) +
                              "'; use 13a (raw text, sacreBLEU's default) or none (already tokenized text)");
}

BleuSmooth parse_bleu_smooth(std::string_view name) {
  if (name == "exp") return BleuSmooth::kExp;
  if (name == "none") return BleuSmooth::kNone;
  throw std::invalid_argument("BLEU: unknown smoothing '" + std::string(name) +
                              "'; use exp (sacreBLEU's default) or none (multi-bleu.perl)");
}

std::string bleu_signature(const BleuOptions& opts, int nrefs) {
  return "nrefs:" + std::to_string(nrefs) + "|case:" + (opts.lowercase ? "lc" : "mixed") +
         "|eff:no|tok:" + (opts.tokenize == BleuTokenize::k13a ? "13a" : "none") +
         "|smooth:" + (opts.smooth == BleuSmooth::kExp ? "exp" : "none") + "|version:normlab";
}

std::vector<std::string> bleu_tokens(std::string_view segment, const BleuOptions& opts) {
  std::string lowered;
  if (opts.lowercase) segment = lowered = nl::data::utf8_lower(segment);
  segment = nl::data::rstrip_whitespace(segment);
  if (opts.tokenize == BleuTokenize::k13a) return nl::data::split_whitespace(tokenize_13a(segment));
  return nl::data::split_whitespace(segment);
}

BleuStats sentence_stats_multi(const std::vector<std::string>& hyp, const std::vector<std::vector<std::string>>& refs) {
  if (refs.empty()) throw std::invalid_argument("BLEU: a hypothesis needs at least one reference");
  BleuStats s;
  s.hyp_len = static_cast<int64_t>(hyp.size());
  s.ref_len = closest_ref_len(s.hyp_len, refs);
  for (std::size_t n = 1; n <= 4; ++n) {
    NgramCounts r;  // per n-gram, the largest count in any reference
    for (const auto& ref : refs)
      for (const auto& [g, c] : count_ngrams(ref, n)) r[g] = std::max(r[g], c);
    int64_t m = 0;
    for (const auto& [g, c] : count_ngrams(hyp, n)) {
      auto it = r.find(g);
      if (it != r.end()) m += std::min(c, it->second);
    }
    s.matches[n - 1] = m;
    s.totals[n - 1] = hyp.size() >= n ? static_cast<int64_t>(hyp.size() - n + 1) : 0;
  }
  return s;
}

BleuScore bleu_from_stats(const BleuStats& s, BleuSmooth smooth) {
  BleuScore b;
  b.hyp_len = s.hyp_len;
  b.ref_len = s.ref_len;
  b.matches = s.matches;
  b.totals = s.totals;
  b.ratio = s.ref_len > 0 ? static_cast<double>(s.hyp_len) / static_cast<double>(s.ref_len) : 0.0;
  b.brevity_penalty = 1.0;
  if (s.hyp_len < s.ref_len)
    b.brevity_penalty = s.hyp_len > 0 ? std::exp(1.0 - static_cast<double>(s.ref_len) / static_cast<double>(s.hyp_len)) : 0.0;
  bool any_match = false;
  for (auto m : s.matches) any_match = any_match || m > 0;
  if (!any_match) return b;  // score 0, precisions 0 (sacreBLEU's early stop)
  double smooth_mteval = 1.0;
  for (int n = 0; n < 4; ++n) {
    if (s.totals[n] == 0) break;  // this and higher orders keep p_n = 0
    const auto t = static_cast<double>(s.totals[n]);
    if (s.matches[n] > 0) {
      b.precisions[n] = 100.0 * static_cast<double>(s.matches[n]) / t;
    } else if (smooth == BleuSmooth::kExp) {
      smooth_mteval *= 2;
      b.precisions[n] = 100.0 / (smooth_mteval * t);
    }
  }
  double log_sum = 0;
  for (double p : b.precisions) {
    if (p == 0) return b;  // log 0: BLEU = 0 (sacreBLEU floors the log to -1e10, which underflows to 0)
    log_sum += std::log(p);
  }
  b.score = b.brevity_penalty * std::exp(log_sum / 4.0);
  return b;
}
std::string BleuScore::to_string() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "BLEU = %.2f, %.1f/%.1f/%.1f/%.1f (BP=%.3f, ratio=%.3f, hyp_len=%lld, ref_len=%lld)",
                score, precisions[0], precisions[1], precisions[2], precisions[3], brevity_penalty, ratio,
                static_cast<long long>(hyp_len), static_cast<long long>(ref_len));
  return buf;
}

BleuScore corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                      const BleuOptions& opts) {
  if (hyps.size() != refs.size())
    throw std::invalid_argument("corpus_bleu: " + std::to_string(hyps.size()) + " hypotheses but " +
                                std::to_string(refs.size()) + " references; give exactly one hypothesis per reference");
  return corpus_bleu_multi(hyps, {refs}, opts);
}

BleuScore corpus_bleu_multi(const std::vector<std::string>& hyps,
                            const std::vector<std::vector<std::string>>& ref_streams, const BleuOptions& opts) {
  if (ref_streams.empty()) throw std::invalid_argument("corpus_bleu: no reference stream given; pass at least one");
  for (std::size_t k = 0; k < ref_streams.size(); ++k)
    if (ref_streams[k].size() != hyps.size())
      throw std::invalid_argument("corpus_bleu: " + std::to_string(hyps.size()) + " hypotheses but " +
                                  std::to_string(ref_streams[k].size()) + " references in reference stream " +
                                  std::to_string(k + 1) + "; give exactly one hypothesis per reference");
  BleuStats total;
  std::vector<std::vector<std::string>> refs(ref_streams.size());
  for (std::size_t i = 0; i < hyps.size(); ++i) {
    for (std::size_t k = 0; k < ref_streams.size(); ++k) refs[k] = bleu_tokens(ref_streams[k][i], opts);
    total += sentence_stats_multi(bleu_tokens(hyps[i], opts), refs);
  }
  return bleu_from_stats(total, opts.smooth);
}

BleuScore corpus_bleu_files(const std::filesystem::path& hyp_path, const std::filesystem::path& ref_path,
                            const BleuOptions& opts) {
  auto h = nl::data::read_lines(hyp_path);
  auto r = nl::data::read_lines(ref_path);
  if (h.size() != r.size())
    throw std::runtime_error("BLEU: " + hyp_path.string() + " has " + std::to_string(h.size()) + " lines but " +
                             ref_path.string() + " has " + std::to_string(r.size()) +
                             "; the hypothesis file needs exactly one line per reference line (keep empty lines)");
  return corpus_bleu(h, r, opts);
}

}  // namespace nl::metrics
