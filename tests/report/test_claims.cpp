// Claim verdicts (report/claims.h, report/welch.h): Student-t tail probabilities against closed forms,
// Welch's test against hand-computed values, the verdict rules (holds / reversed / inconclusive / not
// run, divergence), claims derived from the paper's numbers, and the Xu et al. claim table.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>

#include "papers/powernorm_report.h"
#include "papers/xu2019_report.h"
#include "report/claims.h"
#include "report/welch.h"

using Catch::Matchers::Contains;
using namespace nlapp;

TEST_CASE("welch: Student t tail probabilities equal their closed forms", "[report][claims]") {
  // df = 1 is the Cauchy distribution: P(|T| >= t) = 1 - 2 atan(t) / pi.
  for (double t : {0.0, 0.5, 1.0, 3.0, 40.0})
    CHECK(student_t_two_sided_p(t, 1) == Approx(1 - 2 * std::atan(t) / M_PI).margin(1e-12));
  // df = 2: P(|T| >= t) = 1 - t / sqrt(2 + t^2).
  for (double t : {0.1, 1.0, 2.5, 10.0}) CHECK(student_t_two_sided_p(t, 2) == Approx(1 - t / std::sqrt(2 + t * t)).margin(1e-12));
  // Large df tends to the normal: 1.959964 -> 0.05.
  CHECK(student_t_two_sided_p(1.959964, 1e7) == Approx(0.05).margin(1e-5));
  CHECK(student_t_two_sided_p(-1.0, 1) == Approx(0.5).margin(1e-12));
  CHECK(student_t_two_sided_p(INFINITY, 3) == 0);
  CHECK_THROWS_WITH(student_t_two_sided_p(1, 0), Contains("df must be > 0"));
}

TEST_CASE("welch: t, df and p of two samples", "[report][claims]") {
  // a = {1, 2, 3}: mean 2, var 1; b = {4, 6}: mean 5, var 2. s² / n: 1/3 and 1.
  const WelchResult w = welch_t_test({1, 2, 3}, {4, 6});
  CHECK(w.diff == Approx(-3));
  CHECK(w.t == Approx(-3 / std::sqrt(4.0 / 3)));
  const double df = std::pow(4.0 / 3, 2) / (std::pow(1.0 / 3, 2) / 2 + 1.0 / 1);
  CHECK(w.df == Approx(df));
  CHECK(w.p == Approx(student_t_two_sided_p(w.t, df)));
  CHECK(sample_std({2, 4, 4, 4, 5, 5, 7, 9}) == Approx(std::sqrt(32.0 / 7)));
  // Zero variance on both sides: significant exactly when the means differ.
  CHECK(welch_t_test({1, 1}, {2, 2}).p == 0);
  CHECK(welch_t_test({1, 1}, {1, 1}).p == 1);
  CHECK_THROWS_WITH(welch_t_test({1}, {1, 2}), Contains("at least two values"));
}

TEST_CASE("claims: verdicts from seeds", "[report][claims]") {
  Claim c;
  c.column = "rt";
  c.better = "adanorm";
  c.worse = "layernorm";
  CHECK(c.statement() == "rt: adanorm > layernorm");
  const ClaimCell high{{77.1, 77.3, 77.2}, 0}, low{{76.0, 76.2, 76.1}, 0}, noisy{{75.0, 78.0, 76.9}, 0};
  CHECK(judge_claim(c, high, low).verdict == Verdict::Holds);
  CHECK(judge_claim(c, high, low).diff == Approx(1.1));
  CHECK(judge_claim(c, low, high).verdict == Verdict::Reversed);
  CHECK(judge_claim(c, high, noisy).verdict == Verdict::Inconclusive);  // within the noise
  CHECK(judge_claim(c, ClaimCell{{77.0}, 0}, low).verdict == Verdict::Inconclusive);  // one seed: no test
  CHECK(judge_claim(c, ClaimCell{}, low).verdict == Verdict::NotRun);
  // Lower is better (BPC): the smaller mean wins.
  c.higher_is_better = false;
  CHECK(c.statement() == "rt: adanorm < layernorm");
  CHECK(judge_claim(c, low, high).verdict == Verdict::Holds);
  c.higher_is_better = true;
  // Divergence decides when it is all on one side.
  CHECK(judge_claim(c, high, ClaimCell{{}, 3}).verdict == Verdict::Holds);
  CHECK(judge_claim(c, ClaimCell{{}, 2}, low).verdict == Verdict::Reversed);
  CHECK(judge_claim(c, ClaimCell{{77.0}, 1}, low).verdict == Verdict::Inconclusive);
  CHECK(verdict_summary({judge_claim(c, high, low), judge_claim(c, low, high), judge_claim(c, ClaimCell{}, low)}) ==
        "1 hold, 1 reversed, 0 inconclusive, 1 not run");
}

TEST_CASE("claims: derived from the paper numbers, Diverge is worst, ties and double Diverge make none", "[report][claims]") {
  const std::vector<Comparison> cmp = {{"T", "Table X", "a", "b"}};
  const std::vector<ClaimColumn> cols = {{"up", "Up", true}, {"down", "Down", false}, {"div", "Div", true},
                                         {"both", "Both", true}, {"tie", "Tie", true}};
  auto paper = [](const std::string& col, const std::string& v) -> double {
    if (col == "up") return v == "a" ? 1.0 : 2.0;    // b better
    if (col == "down") return v == "a" ? 1.0 : 2.0;  // lower better: a better
    if (col == "div") return v == "a" ? 5.0 : NAN;   // b diverges
    if (col == "tie") return 3.0;
    return NAN;
  };
  auto diverged = [](const std::string& col, const std::string& v) { return (col == "div" && v == "b") || col == "both"; };
  const auto cl = derive_claims(cmp, cols, paper, diverged);
  REQUIRE(cl.size() == 3);
  CHECK(cl[0].statement() == "up: b > a");
  CHECK(cl[0].paper_better == 2.0);
  CHECK(cl[1].statement() == "down: a < b");
  CHECK(cl[2].statement() == "div: a > b");
  CHECK(cl[2].paper_worse_diverged);
  CHECK(cl[2].source == "Table X, Div");
}

TEST_CASE("claims: Xu et al. 2019 Tables 1-4 in the columns we run", "[report][claims]") {
  const auto cols = xu2019_columns({});
  const auto claims = xu2019_claims(cols);
  auto find = [&](const std::string& id) -> const Claim* {
    for (const auto& c : claims)
      if (c.id == id) return &c;
    return nullptr;
  };
  // RT: AdaNorm 77.50 > LayerNorm 77.21; SST-5: LayerNorm-simple 40.54 > LayerNorm 39.23; MNIST: w/o Norm
  // 99.14 > LayerNorm 99.13 (the paper's own numbers set the direction); En-De: w/o Norm diverges.
  REQUIRE(find("T4-ada-vs-ln/rt"));
  CHECK(find("T4-ada-vs-ln/rt")->statement() == "rt: adanorm > layernorm");
  CHECK(find("T1-simple-vs-ln/sst5")->statement() == "sst5: layernorm-simple > layernorm");
  CHECK(find("T1-ln-vs-none/mnist")->statement() == "mnist: none > layernorm");
  CHECK(find("T1-ln-vs-none/mt")->paper_worse_diverged);
  CHECK(find("T2-detach-vs-none/mt") == nullptr);  // both diverge in the paper: no ordering claimed
  CHECK(find("T3-mean-vs-var/sst5")->statement() == "sst5: detach-variance > detach-mean");
  CHECK(find("T1-simple-vs-ln/lm") == nullptr);  // Enwiki8: 1.07 = 1.07, no ordering claimed
  REQUIRE(find("T2-detach-vs-none/lm"));
  CHECK(find("T2-detach-vs-none/lm")->statement() == "lm: none < detachnorm");  // BPC: lower is better
  // No records: every claim is "not run".
  const std::string md = format_xu2019_claims(cols, {});
  CHECK_THAT(md, Contains("0 hold, 0 reversed, 0 inconclusive, " + std::to_string(claims.size()) + " not run"));
}

TEST_CASE("claims: Shen et al. 2020 Tables 1-2 in our mt and PTB columns", "[report][claims]") {
  std::vector<std::string> st;
  for (const auto& c : nlapp::powernorm_claims()) st.push_back(c.statement());
  // IWSLT14: PN 35.9 > LN 35.5 > BN 34.4 < PN-V 35.5 (LN = PN-V: no claim); PTB (PPL): PN 47.6 < LN 53.2 <
  // PN-V 55.3 < BN 60.7.
  const std::vector<std::string> want = {"mt: powernorm > layernorm", "lm: powernorm < layernorm", "mt: layernorm > batchnorm",
                                         "lm: layernorm < batchnorm", "mt: powernorm-v > batchnorm", "lm: powernorm-v < batchnorm",
                                         "lm: layernorm < powernorm-v"};
  CHECK(st == want);
  CHECK_THAT(nlapp::format_powernorm_claims({}), Contains("Shen et al. 2020, Tables 1-2") && Contains("0 hold, 0 reversed, 0 inconclusive, 7 not run"));
}

TEST_CASE("claims: each cell names its seed count when the cells hold different numbers of seeds", "[report][claims]") {
  Claim a, b;
  a.id = "A/rt", a.column = "rt", a.better = "adanorm", a.worse = "layernorm";
  b.id = "B/rt", b.column = "rt", b.better = "none", b.worse = "layernorm";
  std::map<std::string, ClaimCell> cells = {{"adanorm", {{77.1, 77.3, 77.2}, 0}},
                                            {"layernorm", {{76.0, 76.2, 76.1}, 0}},
                                            {"none", {{75.0, 75.2, 75.1}, 0}}};
  auto table = [&] {
    return format_claims("P", {a, b}, [&](const Claim&, const std::string& v) { return cells.at(v); },
                         [](const std::string&) { return 2; });
  };
  CHECK_THAT(table(), Contains("77.20 ± 0.10 vs 76.10 ± 0.10 |"));  // all three seeds: no counts
  cells["layernorm"].values = {76.0, 76.2, 76.1, 76.3, 75.9};
  const std::string t = table();
  CHECK_THAT(t, Contains("77.20 ± 0.10 (n=3) vs 76.10 ± 0.16 (n=5)"));
  CHECK_THAT(t, Contains("75.10 ± 0.10 (n=3) vs 76.10 ± 0.16 (n=5)"));
}
