// The papers' numbers in one table (apps/report/paper_numbers.h): known cells, divergence, one entry per
// cell, and canonical norm names only (so a lookup by a task's --norm finds them).
#include <cmath>
#include <set>
#include <tuple>

#include <catch2/catch.hpp>

#include "nn/norm/factory.h"
#include "report/paper_numbers.h"

using nlapp::paper_number;

TEST_CASE("paper numbers: known cells of each paper", "[report][paper]") {
  CHECK(paper_number("xu2019", "enwiki8", "layernorm") == 1.07);
  CHECK(paper_number("xu2019", "enwiki8", "detachnorm") == 1.12);
  CHECK(paper_number("xu2019", "de-en", "adanorm") == 35.6);
  CHECK(paper_number("xu2019", "ptb", "detach-variance") == 89.80);
  CHECK(paper_number("shen2020", "ptb", "layernorm") == 53.2);
  CHECK(paper_number("shen2020", "ptb", "powernorm") == 47.6);
  CHECK(nlapp::find_paper_value("shen2020", "wmt14", "powernorm")->status == 'V');
  CHECK(paper_number("ni2024", "vit-cifar", "lng") == 89.26);
  CHECK(paper_number("ni2024", "resnet-cifar-train", "groupnorm") == 82.16);
  CHECK(std::isnan(paper_number("xu2019", "enwiki8", "batchnorm")));  // no such cell
  CHECK(nlapp::find_paper_value("xu2019", "rt", "lng") == nullptr);
}

TEST_CASE("paper numbers: a diverged cell has no number", "[report][paper]") {
  const nlapp::PaperValue* v = nlapp::find_paper_value("xu2019", "en-de", "detachnorm");
  REQUIRE(v != nullptr);
  CHECK(v->diverged);
  CHECK(std::isnan(v->value));
  CHECK_FALSE(nlapp::find_paper_value("xu2019", "en-de", "layernorm")->diverged);
}

TEST_CASE("paper numbers: one entry per cell, every norm named as the norm table names it", "[report][paper]") {
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (const auto& v : nlapp::paper_values()) {
    INFO(v.paper << " " << v.column << " " << v.norm);
    CHECK(seen.insert({v.paper, v.column, v.norm}).second);
    CHECK(nl::canonical_norm_name(v.norm) == v.norm);
    CHECK_NOTHROW(nl::norm_descriptor(v.norm));
    CHECK(v.diverged == std::isnan(v.value));
  }
}
