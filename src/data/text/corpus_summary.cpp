#include "data/text/corpus_summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace nl::data {

int64_t percentile_nearest_rank(std::vector<int64_t> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto rank = static_cast<int64_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  rank = std::clamp<int64_t>(rank, 1, static_cast<int64_t>(v.size()));
  return v[static_cast<std::size_t>(rank - 1)];
}

nlohmann::json summarize_sequences(const std::string& name, const std::string& file,
                                   const std::vector<std::vector<int32_t>>& seqs, int64_t n_unk, int64_t vocab) {
  std::vector<int64_t> len;
  len.reserve(seqs.size());
  int64_t tokens = 0;
  for (const auto& s : seqs) {
    len.push_back(static_cast<int64_t>(s.size()));
    tokens += static_cast<int64_t>(s.size());
  }
  nlohmann::json j;
  j["name"] = name;
  j["file"] = file;
  j["sentences"] = static_cast<int64_t>(seqs.size());
  j["tokens"] = tokens;
  j["unk"] = n_unk;
  j["unk_rate"] = tokens ? 100.0 * static_cast<double>(n_unk) / static_cast<double>(tokens) : 0.0;
  j["len_min"] = len.empty() ? 0 : *std::min_element(len.begin(), len.end());
  j["len_p50"] = percentile_nearest_rank(len, 50);
  j["len_p90"] = percentile_nearest_rank(len, 90);
  j["len_p95"] = percentile_nearest_rank(len, 95);
  j["len_p99"] = percentile_nearest_rank(len, 99);
  j["len_max"] = len.empty() ? 0 : *std::max_element(len.begin(), len.end());
  j["vocab"] = vocab;
  return j;
}

std::string summary_table(const nlohmann::json& s) {
  std::vector<std::vector<std::string>> rows{
      {"split", "sentences", "tokens", "vocab", "unk %", "p50", "p90", "p95", "p99", "max"}};
  for (const auto& r : s.at("splits")) {
    char unk[32];
    std::snprintf(unk, sizeof unk, "%.2f", r.at("unk_rate").get<double>());
    auto str = [&](const char* k) { return std::to_string(r.at(k).get<int64_t>()); };
    rows.push_back({r.at("name").get<std::string>(), str("sentences"), str("tokens"), str("vocab"), unk,
                    str("len_p50"), str("len_p90"), str("len_p95"), str("len_p99"), str("len_max")});
  }
  std::vector<std::size_t> w(rows[0].size(), 0);
  for (const auto& r : rows)
    for (std::size_t c = 0; c < r.size(); ++c) w[c] = std::max(w[c], r[c].size());
  std::ostringstream o;
  o << "normlab data prepare " << s.value("task", std::string("?")) << " -> " << s.value("out", std::string("?"))
    << "\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t c = 0; c < rows[i].size(); ++c) {
      const auto& cell = rows[i][c];
      std::string pad(w[c] - cell.size(), ' ');
      o << (c == 0 ? cell + pad : "  " + pad + cell);
    }
    o << "\n";
    if (i == 0) {
      std::size_t total = 0;
      for (auto x : w) total += x + 2;
      o << std::string(total - 2, '-') << "\n";
    }
  }
  if (s.contains("notes"))
    for (const auto& n : s["notes"]) o << "note: " << n.get<std::string>() << "\n";
  return o.str();
}

}  // namespace nl::data
