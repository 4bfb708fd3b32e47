#pragma once
// Statistics of a prepared split (sentences, tokens, unknown rate, length percentiles) as JSON and as a
// plain-text table for `normlab data prepare`.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nl::data {

/// Nearest-rank percentile: the value at position ceil(p/100 * n) - 1 (clamped to [0, n-1]) of the sorted
/// values; 0 for an empty input. `p` in (0, 100].
int64_t percentile_nearest_rank(std::vector<int64_t> values, double p);

/// Summary of one side of one split. Lengths count every stored token (an appended </s> included).
/// Keys: name, file, sentences, tokens, unk, unk_rate (percent), len_min, len_p50, len_p90, len_p95,
/// len_p99, len_max, vocab (size of the dictionary used).
nlohmann::json summarize_sequences(const std::string& name, const std::string& file,
                                   const std::vector<std::vector<int32_t>>& seqs, int64_t n_unk, int64_t vocab);

/// Renders summary["splits"] as an aligned text table (one row per split/side) with a title line.
std::string summary_table(const nlohmann::json& summary);

}  // namespace nl::data
