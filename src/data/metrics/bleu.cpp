#include "data/metrics/bleu.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

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
}  // namespace

BleuStats sentence_stats(const std::vector<std::string>& hyp, const std::vector<std::string>& ref) {
  BleuStats s;
  s.hyp_len = static_cast<int64_t>(hyp.size());
  s.ref_len = static_cast<int64_t>(ref.size());
  for (std::size_t n = 1; n <= 4; ++n) {
    auto h = count_ngrams(hyp, n), r = count_ngrams(ref, n);
    int64_t m = 0;
    for (const auto& [g, c] : h) {
      auto it = r.find(g);
      if (it != r.end()) m += std::min(c, it->second);
    }
    s.matches[n - 1] = m;
    s.totals[n - 1] = hyp.size() >= n ? static_cast<int64_t>(hyp.size() - n + 1) : 0;
  }
  return s;
}

BleuScore bleu_from_stats(const BleuStats& s) {
  BleuScore b;
  b.hyp_len = s.hyp_len;
  b.ref_len = s.ref_len;
  b.ratio = s.ref_len > 0 ? static_cast<double>(s.hyp_len) / static_cast<double>(s.ref_len) : 0.0;
  double log_sum = 0;
  bool zero = s.hyp_len == 0;
  for (int n = 0; n < 4; ++n) {
    b.precisions[n] = s.totals[n] > 0 ? 100.0 * static_cast<double>(s.matches[n]) / static_cast<double>(s.totals[n]) : 0.0;
    if (s.matches[n] == 0 || s.totals[n] == 0) zero = true;
    else log_sum += 0.25 * std::log(static_cast<double>(s.matches[n]) / static_cast<double>(s.totals[n]));
  }
  if (s.hyp_len == 0) b.brevity_penalty = 0;
  else if (s.hyp_len > s.ref_len) b.brevity_penalty = 1;
  else b.brevity_penalty = std::exp(1.0 - static_cast<double>(s.ref_len) / static_cast<double>(s.hyp_len));
  b.score = zero ? 0.0 : 100.0 * b.brevity_penalty * std::exp(log_sum);
  return b;
}

std::string BleuScore::to_string() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "BLEU = %.2f, %.1f/%.1f/%.1f/%.1f (BP=%.3f, ratio=%.3f, hyp_len=%lld, ref_len=%lld)",
                score, precisions[0], precisions[1], precisions[2], precisions[3], brevity_penalty, ratio,
                static_cast<long long>(hyp_len), static_cast<long long>(ref_len));
  return buf;
}

BleuScore corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::string>& refs, bool lowercase) {
  if (hyps.size() != refs.size())
    throw std::invalid_argument("corpus_bleu: " + std::to_string(hyps.size()) + " hypotheses but " +
                                std::to_string(refs.size()) + " references; give exactly one hypothesis per reference");
  BleuStats total;
  for (std::size_t i = 0; i < hyps.size(); ++i) {
    auto h = nl::data::split_whitespace(lowercase ? nl::data::utf8_lower(hyps[i]) : hyps[i]);
    auto r = nl::data::split_whitespace(lowercase ? nl::data::utf8_lower(refs[i]) : refs[i]);
    total += sentence_stats(h, r);
  }
  return bleu_from_stats(total);
}

BleuScore corpus_bleu_files(const std::filesystem::path& hyp_path, const std::filesystem::path& ref_path,
                            bool lowercase) {
  auto h = nl::data::read_lines(hyp_path);
  auto r = nl::data::read_lines(ref_path);
  if (h.size() != r.size())
    throw std::runtime_error("BLEU: " + hyp_path.string() + " has " + std::to_string(h.size()) + " lines but " +
                             ref_path.string() + " has " + std::to_string(r.size()) +
                             "; the hypothesis file needs exactly one line per reference line (keep empty lines)");
  return corpus_bleu(h, r, lowercase);
}

}  // namespace nl::metrics
