// The paper tables of `reproduce xu2019` and `reproduce powernorm` from known records: the paper's
// numbers in the right rows and columns (checked against the PDF's Tables 1-4 and ni-pn-details.md §6),
// mean ± std of ours, the statuses (not run, pending, failed, diverged), and Table 2's improvement
// rows equal to the paper's own.
#include <catch2/catch.hpp>

#include <cmath>

#include "papers/powernorm_report.h"
#include "papers/xu2019_report.h"
#include "report/paper_table.h"

using Catch::Matchers::Contains;
using json = nlohmann::json;
using namespace nlapp;

namespace {
RunRecord done(const std::string& column, const std::string& variant, int seed, const std::string& metric, double value) {
  RunRecord r;
  r.run.label = column + "/" + variant + "-seed" + std::to_string(seed);
  r.run.tags = {{"column", column}, {"variant", variant}, {"seed", seed}};
  r.status = RunStatus::Done;
  r.result = {{"test", {{metric, value}}}, {"data", column + " data"}, {"train_loss", json::array()}, {"valid_curve", json::array()}};
  return r;
}
RunRecord with(RunRecord r, RunStatus s) {
  r.status = s;
  return r;
}
const XuTable& table(const std::string& name) {
  for (const auto& t : xu2019_tables())
    if (t.name == name) return t;
  throw std::runtime_error("no table " + name);
}
const PaperRow& row(const std::vector<PaperRow>& rows, const std::string& label) {
  for (const auto& r : rows)
    if (r.label == label) return r;
  throw std::runtime_error("no row " + label);
}
}  // namespace

TEST_CASE("paper table: cells show ours then the paper", "[report][paper-table]") {
  PaperCell c;
  c.paper = 99.13;
  c.ours = {98.0, 99.0};
  CHECK(format_paper_cell(c, 2) == "98.50 ± 0.71 (paper 99.13)");
  c.diverged = 1;
  CHECK(format_paper_cell(c, 1) == "98.5 ± 0.7 (1 diverged) (paper 99.13)");
  PaperCell d;
  d.diverged = 2;
  d.paper_text = "Diverge";
  CHECK(format_paper_cell(d, 2) == "diverged (paper Diverge)");
  PaperCell n;
  n.status = "not run";
  CHECK(format_paper_cell(n, 2) == "not run");
  CHECK(format_paper_cell(PaperCell{}, 2) == "—");
}

TEST_CASE("xu2019: the tables have the paper's rows and numbers", "[report][paper-table]") {
  const auto cols = xu2019_columns({});
  REQUIRE(cols.size() == 8);
  CHECK(table("Table 1").variants == std::vector<std::string>{"none", "layernorm", "layernorm-simple"});
  CHECK(table("Table 3").variants == std::vector<std::string>{"layernorm-simple", "detach-mean", "detach-variance"});
  CHECK(table("Table 4").variants == std::vector<std::string>{"none", "layernorm", "layernorm-simple", "adanorm"});

  std::vector<RunRecord> rec{done("rt", "detach-variance", 1, "acc", 70.0), done("rt", "detach-variance", 2, "acc", 72.0),
                             with(done("lm", "detach-variance", 1, "bpc", 0), RunStatus::Failed),
                             with(done("mnist", "detach-variance", 1, "acc", 0), RunStatus::Pending),
                             with(done("mt", "detach-variance", 1, "bleu", 0), RunStatus::Diverged)};
  const auto rows = xu2019_rows(table("Table 3"), cols, rec);
  REQUIRE(rows.size() == 3);
  const auto& dv = row(rows, "Detach Variance");
  CHECK(format_paper_cell(dv.cells.at("rt"), 2) == "71.00 ± 1.41 (paper 77.04)");
  CHECK(format_paper_cell(dv.cells.at("sst5"), 2) == "— (paper 41.74)");
  CHECK(format_paper_cell(dv.cells.at("ptb"), 2) == "— (paper 89.80)");
  CHECK(format_paper_cell(dv.cells.at("enwiki8"), 3) == "failed (paper 1.10)");
  CHECK(format_paper_cell(dv.cells.at("mnist"), 2) == "pending (paper 99.10)");
  CHECK(format_paper_cell(dv.cells.at("en-de"), 2) == "diverged (paper Diverge)");
  CHECK(format_paper_cell(dv.cells.at("de-en"), 2) == "not run (paper 34.20)");
  CHECK(format_paper_cell(row(rows, "Detach Mean").cells.at("rt"), 2) == "— (paper 75.02)");
  CHECK(row(rows, "LayerNorm-simple").cells.at("en-vi").paper == 31.6);
  CHECK(xu2019_paper("mnist", "adanorm") == 99.35);
  CHECK(std::isnan(xu2019_paper("en-de", "none")));
  CHECK(xu2019_paper_diverged("en-de", "none"));
  CHECK_FALSE(xu2019_paper_diverged("de-en", "none"));
}

TEST_CASE("xu2019: Table 2's improvement rows equal the paper's", "[report][paper-table]") {
  const auto cols = xu2019_columns({});
  const auto top = xu2019_rows(table("Table 2 (top)"), cols, {});
  REQUIRE(top.size() == 3);
  const auto& imp = top.back();
  CHECK(imp.label == "Improvement");
  // The paper's row: -0.1 -0.7 -0.08 -0.45 1.49 -0.04 1.48 (En-De: both diverge).
  CHECK(imp.cells.at("de-en").paper == Approx(-0.1));
  CHECK(imp.cells.at("en-vi").paper == Approx(-0.7));
  CHECK(imp.cells.at("enwiki8").paper == Approx(-0.08));  // lower is better: none - DetachNorm
  CHECK(imp.cells.at("rt").paper == Approx(-0.45));
  CHECK(imp.cells.at("sst5").paper == Approx(1.49));
  CHECK(imp.cells.at("mnist").paper == Approx(-0.04));
  CHECK(imp.cells.at("ptb").paper == Approx(1.48));
  CHECK(imp.cells.at("en-de").paper_text == "—");
  const auto bottom = xu2019_rows(table("Table 2 (bottom)"), cols, {done("rt", "detachnorm", 1, "acc", 70), done("rt", "layernorm-simple", 1, "acc", 72.5)});
  CHECK(bottom.back().cells.at("de-en").paper == Approx(1.6));
  CHECK(bottom.back().cells.at("rt").ours == std::vector<double>{2.5});
}

TEST_CASE("xu2019: the report names the data of every column", "[report][paper-table]") {
  const auto cols = xu2019_columns({"/d/shared", "/d/bin"});
  RunRecord gpu = done("mt", "layernorm", 2, "bleu", 30.3);
  gpu.result["precision"] = "bfloat16";
  gpu.result["settings"] = {{"device", "cuda:0"}};
  const std::string md = format_xu2019_report(cols, {done("mt", "layernorm", 1, "bleu", 30.1), gpu}, "Setup: test.");
  // Each column says how many of its runs finished in which precision on which device.
  CHECK_THAT(md, Contains("1 finished run(s) in bfloat16 on cuda:0; 1 finished run(s) in float32 on cpu"));
  CHECK_THAT(md, Contains("En-De BLEU (+) · ours: Multi30k En→De") && Contains("Enwiki8 BPC (−) · ours: tiny-shakespeare") &&
                     Contains("PTB UAS (+) · ours: UD English EWT") && Contains("30.20 ± 0.14 (paper 28.30)") &&
                     Contains("## Table 2 (bottom)") && Contains("mt data") && Contains("only the IWSLT14 valid/test sets"));
  CHECK(cols[6].overrides["data"] == "/d/shared/mnist");
  CHECK(cols[0].overrides["data"] == "/d/bin/multi30k");
}

TEST_CASE("powernorm: Tables 1-2 carry the paper's numbers (read from its text)", "[report][paper-table]") {
  RunRecord ln = done("mt", "layernorm", 1, "bleu", 30.0);
  ln.run.tags["max_tokens"] = 4096;
  RunRecord small = done("mt", "layernorm", 1, "bleu", 20.0);
  small.run.tags["max_tokens"] = 1024;
  const auto t1 = powernorm_table_rows(1, {ln, small});
  REQUIRE(t1.size() == 4);
  CHECK(t1[0].label == "LN");
  CHECK(format_paper_cell(t1[0].cells.at("iwslt14"), 2) == "30.00 (paper 35.5 [V])");
  CHECK(format_paper_cell(t1[0].cells.at("wmt14"), 2) == "not run (paper 29.5 [V])");
  CHECK(format_paper_cell(t1[3].cells.at("wmt14"), 2) == "not run (paper 30.1 [V])");
  CHECK(format_paper_cell(t1[3].cells.at("iwslt14"), 2) == "— (paper 35.9 [V])");
  CHECK(t1[1].label == "BN (released MaskSyncBatchNorm)");
  const auto t2 = powernorm_table_rows(2, {with(done("lm", "powernorm", 1, "ppl", 0), RunStatus::Pending)});
  CHECK(format_paper_cell(t2[3].cells.at("ptb"), 2) == "pending (paper 47.6 [V])");
  CHECK(format_paper_cell(t2[1].cells.at("ptb"), 2) == "— (paper 60.7 [V])");  // BN: Table 2's 60.7
  CHECK(powernorm_paper_text(powernorm_paper("ptb", "rmsnorm")) == "n/a");
  const auto ab = powernorm_ablation_rows({ln, small});
  CHECK(ab[0].cells.at("1024").ours == std::vector<double>{20.0});
  CHECK(ab[0].cells.at("4096").ours == std::vector<double>{30.0});
  CHECK(ab[0].cells.at("2048").ours.empty());
}

TEST_CASE("paper table: every cell names its seed count when the counts differ, derived rows never", "[report][paper]") {
  const std::vector<PaperColumn> cols = {{"rt", "RT", true, 2}};
  PaperRow a{"LayerNorm", {}}, b{"LayerNorm-simple", {}};
  a.cells["rt"].ours = {72.0, 73.0, 74.0};
  b.cells["rt"].ours = {71.0, 72.0, 73.0};
  std::vector<PaperRow> rows = {a, b, improvement_row("Improvement", a, b, cols)};
  CHECK_THAT(format_paper_table("Models", cols, rows), !Contains("(n="));
  rows[1].cells["rt"].ours.push_back(72.0);
  rows[2] = improvement_row("Improvement", rows[0], rows[1], cols);
  const std::string t = format_paper_table("Models", cols, rows);
  CHECK_THAT(t, Contains("73.00 ± 1.00 (n=3)") && Contains("72.00 ± 0.82 (n=4)"));
  CHECK_THAT(t, Contains(" -1.00 |"));  // the improvement row: a difference of means, no count
}
