#pragma once
// Reproducible shuffling. std::shuffle and std::uniform_int_distribution are implementation-defined, so
// the same seed would give different orders with different standard libraries; this uses std::mt19937_64
// (whose raw output sequence is fixed by the C++ standard) with an explicit Fisher-Yates and rejection
// sampling, so a seed gives the same permutation on every platform.
#include <cstdint>
#include <random>
#include <vector>

namespace nl::data {

/// Uniform integer in [0, bound) from raw mt19937_64 outputs: draws r until r < floor(2^64 / bound) * bound
/// and returns r % bound (no modulo bias). `bound` must be >= 1.
uint64_t uniform_below(std::mt19937_64& rng, uint64_t bound);

/// Fisher-Yates (Durstenfeld) shuffle: for i = n-1 down to 1, swap v[i] with v[uniform_below(i + 1)].
template <class T>
void fisher_yates_shuffle(std::vector<T>& v, std::mt19937_64& rng) {
  for (std::size_t i = v.size(); i > 1; --i) {
    std::size_t j = static_cast<std::size_t>(uniform_below(rng, i));
    std::swap(v[i - 1], v[j]);
  }
}

/// A permutation of 0..n-1 from std::mt19937_64(seed) and fisher_yates_shuffle.
std::vector<int64_t> seeded_permutation(int64_t n, uint64_t seed);

}  // namespace nl::data
