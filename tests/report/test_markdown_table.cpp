// Tests for apps/common/markdown_table: layout, alignment, escaping, mean ± std.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "report/markdown_table.h"

using namespace nlapp;

TEST_CASE("markdown table: alignment row and padding", "[report][markdown]") {
  const std::string t = markdown_table({"Model", "MNIST", "Paper"},
                                       {{"LayerNorm", "99.13 \u00B1 0.04", "99.12"},
                                        {"AdaNorm", "99.35", "99.35"}},
                                       {Align::Left, Align::Right, Align::Center});
  const std::string expected =
      "| Model     |        MNIST | Paper |\n"
      "| :-------- | -----------: | :---: |\n"
      "| LayerNorm | 99.13 \u00B1 0.04 | 99.12 |\n"
      "| AdaNorm   |        99.35 | 99.35 |\n";
  CHECK(t == expected);
}

TEST_CASE("markdown table: centering splits odd padding left-short", "[report][markdown]") {
  CHECK(markdown_table({"name"}, {{"ab"}, {"abcdefg"}}, {Align::Center}) ==
        "|  name   |\n"
        "| :-----: |\n"
        "|   ab    |\n"
        "| abcdefg |\n");
}

TEST_CASE("markdown table: defaults, short rows, escaping, errors", "[report][markdown]") {
  CHECK(markdown_table({"a", "b"}, {{"x"}}) ==
        "| a   | b   |\n"
        "| :-- | :-- |\n"
        "| x   |     |\n");
  CHECK(markdown_table({"k|v"}, {{"a|b\nc"}}) ==
        "| k\\|v   |\n"
        "| :----- |\n"
        "| a\\|b c |\n");
  CHECK_THROWS_AS(markdown_table({"a"}, {{"1", "2"}}), std::invalid_argument);
  CHECK_THROWS_AS(markdown_table({}, {}), std::invalid_argument);
  CHECK(utf8_length("99 \u00B1 1") == 6);
}

TEST_CASE("format_mean_std: sample std against hand-computed values", "[report][markdown]") {
  // {86.2, 86.4, 86.63}: mean 86.41, deviations -0.21, -0.01, 0.22,
  // sum of squares 0.0441 + 0.0001 + 0.0484 = 0.0926, /2 = 0.0463, sqrt = 0.21517...
  CHECK(format_mean_std({86.2, 86.4, 86.63}) == "86.41 \u00B1 0.22");
  // {1, 2, 3, 4}: mean 2.5, sample var 5/3, std 1.29099
  CHECK(format_mean_std({1, 2, 3, 4}, 3) == "2.500 \u00B1 1.291");
  CHECK(format_mean_std({99.35}) == "99.35");
  CHECK(format_mean_std({7, 7, 7}, 1) == "7.0 \u00B1 0.0");
  CHECK(format_mean_std({}) == "n/a");
  CHECK(format_mean_std({0.5, 1.5}, 0) == "1 \u00B1 1");
}
