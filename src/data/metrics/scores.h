#pragma once
// Simple evaluation metrics: accuracy (classification), perplexity and bits per character (language
// modelling, from summed negative log-likelihood in nats).
#include <cstdint>
#include <vector>

namespace nl::metrics {

/// Percentage of positions where pred == gold, in [0, 100]. Throws std::invalid_argument if the sizes
/// differ or are zero.
double accuracy(const std::vector<int64_t>& pred, const std::vector<int64_t>& gold);

/// Perplexity PPL = exp(sum_nll / num_tokens), `sum_nll` in nats summed over `num_tokens` predicted tokens
/// (each </s> counts as a token, as in Mikolov et al.'s PTB setup). Throws std::invalid_argument if
/// num_tokens <= 0.
double perplexity(double sum_nll_nats, int64_t num_tokens);

/// Bits per character BPC = sum_nll / (num_chars * ln 2), `sum_nll` in nats over `num_chars` predicted
/// characters. Throws std::invalid_argument if num_chars <= 0.
double bits_per_character(double sum_nll_nats, int64_t num_chars);

}  // namespace nl::metrics
