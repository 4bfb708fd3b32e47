#include "data/metrics/scores.h"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace nl::metrics {

double accuracy(const std::vector<int64_t>& pred, const std::vector<int64_t>& gold) {
  if (pred.size() != gold.size() || gold.empty())
    throw std::invalid_argument("accuracy: " + std::to_string(pred.size()) + " predictions for " +
                                std::to_string(gold.size()) + " gold labels (need equal, non-zero counts)");
  std::size_t ok = 0;
  for (std::size_t i = 0; i < gold.size(); ++i) ok += pred[i] == gold[i];
  return 100.0 * static_cast<double>(ok) / static_cast<double>(gold.size());
}

double perplexity(double sum_nll_nats, int64_t num_tokens) {
  if (num_tokens <= 0) throw std::invalid_argument("perplexity: num_tokens must be > 0");
  return std::exp(sum_nll_nats / static_cast<double>(num_tokens));
}

double bits_per_character(double sum_nll_nats, int64_t num_chars) {
  if (num_chars <= 0) throw std::invalid_argument("bits_per_character: num_chars must be > 0");
  return sum_nll_nats / (static_cast<double>(num_chars) * std::numbers::ln2);
}

}  // namespace nl::metrics
