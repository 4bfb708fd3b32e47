// merge_limit_table (docs/ln-theory.md's generated table): the same instances as `ln-theory merge` draws.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "common/ln_theory.h"

using namespace nlapp;
using Catch::Matchers::Contains;

TEST_CASE("merge limit table: one row per m, the rows ln-theory merge prints for that m", "[lntheory]") {
  // Spaces removed: the two tables pad their columns differently.
  auto squeeze = [](std::string s) {
    std::erase(s, ' ');
    return s;
  };
  // The data row of size m in a squeezed table: "|m|instances|...|min margin|".
  auto row = [](const std::string& s, int64_t m) {
    const std::string key = "\n|" + std::to_string(m) + "|";
    const size_t at = s.find(key);
    return at == std::string::npos ? std::string("(no row)") : s.substr(at + 1, s.find('\n', at + 1) - at - 1);
  };
  const std::string t = squeeze(merge_limit_table({8, 12}, 2));
  CHECK_THAT(row(t, 8), Contains("|8|2|") && Contains("|100%|"));
  CHECK_THAT(row(t, 12), Contains("|12|2|") && Contains("|100%|"));
  for (const int64_t m : {8, 12}) {
    MergeConfig cfg;
    cfg.instances = 2;
    cfg.m_min = cfg.m_max = m;
    CHECK(row(t, m) == row(squeeze(merge_report(cfg)), m));  // the same draws, networks and numbers
  }
  CHECK_THROWS_AS(merge_limit_table({8}, 0), std::invalid_argument);
  CHECK_THROWS_WITH(merge_limit_table({1001}, 1), Contains("m must be in [1, 1000]"));
}
