// Dropout's keep test on integers (cpu::KeepTest) against the floating compare it replaces,
// T(uniform01(seed, i)) > T(p): at the threshold's edge and on a million counters.
#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>

#include "backends/cpu/counter_rng.h"

using namespace nl::cpu;

namespace {
// The words whose top 53 bits are k: the smallest and the largest.
uint64_t lowest_word(uint64_t k) { return k << 11; }
uint64_t highest_word(uint64_t k) { return (k << 11) | 0x7FFull; }

template <typename T>
void check_edge(double p) {
  const KeepTest kt = KeepTest::make<T>(123, p);
  REQUIRE_FALSE(kt.none);
  const uint64_t k = kt.threshold >> 11;
  CHECK((kt.threshold & 0x7FFull) == 0);
  CHECK(T(uniform01_of_bits(k)) > T(p));  // the threshold's bits pass ...
  if (k > 0) CHECK_FALSE(T(uniform01_of_bits(k - 1)) > T(p));  // ... and the ones below do not
  // The word compare agrees at the edge's words.
  CHECK(lowest_word(k) >= kt.threshold);
  if (k > 0) CHECK_FALSE(highest_word(k - 1) >= kt.threshold);
}
}  // namespace

TEST_CASE("counter rng: dropout's integer keep test is the floating compare at the threshold", "[rng][dropout]") {
  for (double p : {0.0, 1e-300, 0.1, 0.2, 0.3, 0.5, 1.0 / 3.0, 0.9, 0.999999, std::nextafter(1.0, 0.0)}) {
    INFO("p = " << p);
    check_edge<double>(p);
    if ((float)p < 1.0f) check_edge<float>(p);
  }
  CHECK(KeepTest::make<double>(5, 0.0).threshold == 0);  // p = 0 keeps every word
}

TEST_CASE("counter rng: dropout's integer keep test equals the floating compare on every counter", "[rng][dropout]") {
  for (double p : {0.1, 0.3, 0.7}) {
    const uint64_t seed = 0x1234567ull + (uint64_t)(p * 100);
    const KeepTest kd = KeepTest::make<double>(seed, p), kf = KeepTest::make<float>(seed, p);
    int64_t kept = 0;
    const int64_t n = 1 << 20;
    for (int64_t i = 0; i < n; ++i) {
      const double u = uniform01(seed, (uint64_t)i + 977);
      REQUIRE(kd.keep((uint64_t)i + 977) == (u > p));
      REQUIRE(kf.keep((uint64_t)i + 977) == ((float)u > (float)p));
      kept += kd.keep((uint64_t)i + 977);
    }
    CHECK(std::abs((double)kept / n - (1 - p)) < 5e-3);  // and the mask keeps 1 - p of the elements
  }
}

TEST_CASE("counter rng: a drop probability that rounds to 1 drops everything, one outside 0 to 1 is refused", "[rng][dropout]") {
  const double p = 1.0 - 1e-9;  // 1 in float32
  const KeepTest kf = KeepTest::make<float>(9, p);
  CHECK(kf.none);
  for (uint64_t i = 0; i < 1000; ++i) CHECK_FALSE(kf.keep(i));
  CHECK_FALSE(KeepTest::make<double>(9, p).none);
  CHECK_THROWS_AS(KeepTest::make<double>(9, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(KeepTest::make<double>(9, -0.1), std::invalid_argument);
  CHECK_THROWS_AS(KeepTest::make<double>(9, std::nan("")), std::invalid_argument);
}
