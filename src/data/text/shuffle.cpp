#include "data/text/shuffle.h"

#include <limits>
#include <numeric>

namespace nl::data {

uint64_t uniform_below(std::mt19937_64& rng, uint64_t bound) {
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  const uint64_t limit = max - (max % bound + 1) % bound;  // largest multiple of bound, minus 1
  uint64_t r;
  do r = rng();
  while (r > limit);
  return r % bound;
}

std::vector<int64_t> seeded_permutation(int64_t n, uint64_t seed) {
  std::vector<int64_t> p(static_cast<std::size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  std::mt19937_64 rng(seed);
  fisher_yates_shuffle(p, rng);
  return p;
}

}  // namespace nl::data
