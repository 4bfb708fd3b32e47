#include "papers/powernorm_report.h"

#include "engine/trainer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "nn/norm/factory.h"
#include "probes/probe_common.h"
#include "report/markdown_table.h"
#include "report/paper_numbers.h"
#include "report/plot_svg.h"

namespace nlapp {
using json = nlohmann::json;
namespace fs = std::filesystem;

const std::vector<std::string>& powernorm_variants() {
  static const std::vector<std::string> v{"layernorm", "batchnorm", "powernorm-v", "powernorm"};
  return v;
}

std::string powernorm_row_label(const std::string& v) {
  static const std::map<std::string, std::string> l = {{"layernorm", "LN"},
                                                       {"batchnorm", "BN (released MaskSyncBatchNorm)"},
                                                       {"powernorm-v", "PN-V"},
                                                       {"powernorm", "PN"}};
  auto it = l.find(v);
  return it == l.end() ? v : it->second;
}

PaperNumber powernorm_paper(const std::string& column, const std::string& v) {
  const PaperValue* p = find_paper_value("shen2020", column, v);
  return p ? PaperNumber{p->value, p->status} : PaperNumber{std::nan(""), 0};
}

std::string powernorm_paper_text(const PaperNumber& p) {
  if (p.status == 0) return "n/a";
  return format_fixed(p.value, 1) + " [" + std::string(1, p.status) + "]";
}

const std::vector<std::pair<int64_t, int64_t>>& powernorm_ablation_batches() {
  static const std::vector<std::pair<int64_t, int64_t>> b{{1024, 4}, {2048, 2}, {4096, 1}};
  return b;
}

namespace {
struct TableSpec {
  std::string ours_col, paper_col, other_col, metric;
  PaperColumn ours, other;
};

TableSpec table_spec(int table) {
  if (table == 1)
    return {"mt", "iwslt14", "wmt14", "bleu", {"iwslt14", "IWSLT14 BLEU (+) · ours: Multi30k En→De", true, 2},
            {"wmt14", "WMT14 BLEU (+) · ours: not run", true, 2}};
  if (table == 2)
    return {"lm", "ptb", "wt103", "ppl", {"ptb", "PTB test PPL (−) · ours: PTB (lm ptb)", false, 2},
            {"wt103", "WikiText-103 PPL (−) · ours: not run", false, 2}};
  throw std::invalid_argument("powernorm: table must be 1 or 2, got " + std::to_string(table));
}

// Ours for one variant of column `col` (records whose tags match `extra` too).
PaperCell ours_cell(const std::vector<RunRecord>& records, const std::string& col, const std::string& v, const std::string& metric,
                    const json& extra = json::object()) {
  PaperCell c;
  int pending = 0, failed = 0;
  for (const auto& r : records) {
    const json& t = r.run.tags;
    if (t.value("column", "") != col || t.value("variant", "") != v) continue;
    bool match = true;
    for (const auto& [k, x] : extra.items()) match = match && t.contains(k) && t[k] == x;
    if (!match) continue;
    if (r.status == RunStatus::Pending) ++pending;
    if (r.status == RunStatus::Failed) ++failed;
    if (r.status == RunStatus::Diverged) ++c.diverged;
    if (r.status == RunStatus::Done) c.ours.push_back(r.test_metric(metric));
  }
  if (c.status.empty() && c.ours.empty() && !c.diverged && (pending || failed)) c.status = failed ? "failed" : "pending";
  return c;
}
}  // namespace

std::vector<PaperColumn> powernorm_table_columns(int table) {
  const TableSpec s = table_spec(table);
  return {s.ours, s.other};
}

std::vector<PaperRow> powernorm_table_rows(int table, const std::vector<RunRecord>& records) {
  const TableSpec s = table_spec(table);
  std::vector<PaperRow> rows;
  for (const auto& v : powernorm_variants()) {
    PaperRow r{powernorm_row_label(v), {}};
    PaperCell ours = ours_cell(records, s.ours_col, v, s.metric, table == 1 ? json{{"max_tokens", 4096}} : json::object());
    ours.paper_text = powernorm_paper_text(powernorm_paper(s.paper_col, v));
    r.cells[s.paper_col] = ours;
    PaperCell other;
    other.status = "not run";
    other.paper_text = powernorm_paper_text(powernorm_paper(s.other_col, v));
    r.cells[s.other_col] = other;
    rows.push_back(r);
  }
  return rows;
}

std::vector<ExperimentRun> powernorm_runs(bool table1, bool table2, bool ablation, int seeds, const std::string& data_bin) {
  std::vector<ExperimentRun> runs;
  std::vector<std::pair<int64_t, int64_t>> sizes;
  for (const auto& b : powernorm_ablation_batches())
    if ((b.first == 4096 && table1) || ablation) sizes.push_back(b);
  // BatchNorm runs as released (MaskSyncBatchNorm): --bn-reading sync, for the norms that read it, where
  // the task has the setting (the lm task has none: its BatchNorm is the plain masked one).
  auto lm = registry_task_factory()("lm");
  const bool lm_released = lm && task_schema(*lm).find("bn_reading");
  for (int seed = 1; seed <= seeds; ++seed) {
    for (const auto& [tokens, uf] : sizes)
      for (const auto& v : powernorm_variants()) {
        json o = {{"norm", v}, {"seed", seed}, {"data", data_bin + "/multi30k"}, {"max_tokens", tokens}, {"update_freq", uf}};
        if (nl::norm_accepts_option(v, "reading")) o["bn_reading"] = "sync";
        runs.push_back({"mt-tok" + std::to_string(tokens) + "/" + v + "-seed" + std::to_string(seed), "mt", "multi30k", o,
                        {{"column", "mt"}, {"variant", v}, {"seed", seed}, {"max_tokens", tokens}},
                        RegistryKey{"powernorm", "mt-tok" + std::to_string(tokens), v, seed}});
      }
    if (table2)
      for (const auto& v : powernorm_variants()) {
        json o = {{"norm", v}, {"seed", seed}};
        if (lm_released && nl::norm_accepts_option(v, "reading")) o["bn_reading"] = "sync";
        runs.push_back({"lm-ptb/" + v + "-seed" + std::to_string(seed), "lm", "ptb", o, {{"column", "lm"}, {"variant", v}, {"seed", seed}},
                        RegistryKey{"powernorm", "lm-ptb", v, seed}});
      }
  }
  return runs;
}

std::vector<Claim> powernorm_claims() {
  static const std::vector<Comparison> cmp = {{"T-pn-vs-ln", "PN vs LN", "powernorm", "layernorm"},
                                              {"T-ln-vs-bn", "LN vs BN", "layernorm", "batchnorm"},
                                              {"T-pnv-vs-bn", "PN-V vs BN", "powernorm-v", "batchnorm"},
                                              {"T-ln-vs-pnv", "LN vs PN-V", "layernorm", "powernorm-v"}};
  const std::vector<ClaimColumn> cols = {{"mt", "Table 1, IWSLT14", true}, {"lm", "Table 2, PTB", false}};
  auto paper_col = [](const std::string& key) { return key == "mt" ? "iwslt14" : "ptb"; };
  std::vector<Claim> claims = derive_claims(
      cmp, cols, [&](const std::string& key, const std::string& v) { return powernorm_paper(paper_col(key), v).value; },
      [](const std::string&, const std::string&) { return false; });
  for (auto& c : claims) c.source = c.source.substr(c.source.find(", ") + 2);  // "Table 1, IWSLT14"
  return claims;
}

std::string format_powernorm_claims(const std::vector<RunRecord>& records) {
  return format_claims(
      "Shen et al. 2020, Tables 1-2", powernorm_claims(),
      [&](const Claim& c, const std::string& v) {
        const PaperCell p = ours_cell(records, c.column, v, c.column == "mt" ? "bleu" : "ppl",
                                      c.column == "mt" ? json{{"max_tokens", 4096}} : json::object());
        return ClaimCell{p.ours, p.diverged};
      },
      [](const std::string&) { return 2; });
}

std::vector<PaperRow> powernorm_ablation_rows(const std::vector<RunRecord>& records) {
  std::vector<PaperRow> rows;
  for (const auto& v : powernorm_variants()) {
    PaperRow r{powernorm_row_label(v), {}};
    for (const auto& [tokens, uf] : powernorm_ablation_batches())
      r.cells[std::to_string(tokens)] = ours_cell(records, "mt", v, "bleu", {{"max_tokens", tokens}});
    rows.push_back(r);
  }
  return rows;
}

namespace {
// A probe curve against the percentage of the probed updates (the paper's "Percent of Training Epochs").
Series percent_series(const BatchStatsRun& run, const std::string& field, const std::string& name) {
  Series s = series_of(run.records, field, name);
  const double n = (double)std::max<size_t>(run.records.size(), 1);
  for (double& x : s.x) x = 100.0 * x / n;
  return s;
}
}  // namespace

std::vector<std::string> write_powernorm_figures(const fs::path& out, const PowerNormProbes& p) {
  // The probe run of one norm (the figures' data, as the paper's figure captions name them), or null.
  auto probe_of = [](const std::vector<BatchStatsRun>& runs, const std::string& norm) -> const BatchStatsRun* {
    const auto it = std::find_if(runs.begin(), runs.end(), [&](const BatchStatsRun& r) { return r.norm == norm; });
    return it == runs.end() ? nullptr : &*it;
  };
  const BatchStatsRun* rbn = probe_of(p.resnet, "batchnorm");
  const BatchStatsRun* tbn = probe_of(p.mt, "batchnorm");
  const BatchStatsRun* tpnv = probe_of(p.mt, "powernorm-v");
  auto two = [](const BatchStatsRun* a, const std::string& an, const BatchStatsRun* b, const std::string& bn, const std::string& field) {
    std::vector<Series> s;
    if (a) s.push_back(percent_series(*a, field, an));
    if (b) s.push_back(percent_series(*b, field, bn));
    return s;
  };
  const std::string x = "percent of the probed updates";
  std::vector<std::pair<std::string, std::pair<PlotSpec, std::vector<Series>>>> figs = {
      {"figure2-mean.svg", {{"Figure 2 (left): (1/d)‖μ_B − μ‖, first BN layer", x, "log scale", true},
                            two(rbn, "ResNet-20 BN (CIFAR-10)", tbn, "Transformer BN (Multi30k)", "mean_dist")}},
      {"figure2-var.svg", {{"Figure 2 (right): (1/d)‖σ²_B − σ²‖, first BN layer", x, "log scale", true},
                           two(rbn, "ResNet-20 BN (CIFAR-10)", tbn, "Transformer BN (Multi30k)", "var_dist")}},
      {"figure3-grad-mean.svg", {{"Figure 3 (left): (1/d)‖g_μ‖, first BN layer", x, "log scale", true},
                                 two(rbn, "ResNet-20 BN (CIFAR-10)", tbn, "Transformer BN (Multi30k)", "grad_mean")}},
      {"figure3-grad-var.svg", {{"Figure 3 (right): (1/d)‖g_σ²‖, first BN layer", x, "log scale", true},
                                two(rbn, "ResNet-20 BN (CIFAR-10)", tbn, "Transformer BN (Multi30k)", "grad_var")}},
      {"figure4-var.svg", {{"Figure 4 (left): (1/d)‖σ²_B − σ²‖ (BN) vs (1/d)‖ψ²_B − ψ²‖ (PN-V)", x, "log scale", true},
                           two(tbn, "BN", tpnv, "PN-V", "var_dist")}},
      {"figure4-grad.svg", {{"Figure 4 (right): (1/d)‖g_σ²‖ (BN) vs (1/d)‖g_ψ²‖ (PN-V)", x, "log scale", true},
                            two(tbn, "BN", tpnv, "PN-V", "grad_var")}},
  };
  std::vector<std::string> files;
  for (const auto& [name, f] : figs) {
    write_line_chart(out / name, f.first, f.second);
    files.push_back(name);
  }
  return files;
}

std::string format_powernorm_report(const std::vector<RunRecord>& records, const PowerNormProbes& probes, const std::string& setup) {
  std::ostringstream md;
  md << "# Shen et al. 2020 (PowerNorm) at CPU scale\n\n"
     << setup << "\n\n"
     << "Reading that ran: the released code's (sIncerass/powernorm). PN: forward with the running ψ after "
     << "warmup_iters = --warmup-updates (with the warm-up double running update), approximate backward with dx "
     << "divided by the batch ψ_B, GroupScaling (groups = heads) before it; BN: the released MaskSyncBatchNorm "
     << "(`--bn-reading sync`: layer scaling, pads filled with the channel mean, momentum 0.05); batch-statistic norms "
     << "in the encoder only, the decoder keeps LayerNorm (the mt task's rule, as the code). Paper numbers: "
     << "Tables 1-2 of the paper ([V]: read from its text); n/a = no number in the paper. Each cell: ours, mean ± std over "
     << "seeds, then the paper's.\n\n";
  md << "## Table 1 analogue: machine translation, test BLEU\n\n"
     << format_paper_table("Model", powernorm_table_columns(1), powernorm_table_rows(1, records)) << "\n"
     << "Ours: the mt task, config multi30k (pre-norm 3 + 3 layers, d 256, max_tokens 4096), test BLEU of the average "
        "of the last epoch checkpoints with beam search; the paper: IWSLT14 De-En (transformer small) and WMT14 "
        "En-De (big).\n\n";
  md << "## Table 2 analogue: language modelling, test PPL\n\n"
     << format_paper_table("Model", powernorm_table_columns(2), powernorm_table_rows(2, records)) << "\n"
     << "Ours: the lm task, config ptb (word-level PTB); the paper: the Tensorized Transformer baseline (3 layers, d 256, "
        "ni-pn-details.md §6.3). How the paper kept batch statistics causal in the LM is not known; the lm task's own rule "
        "for batch-statistic norms applies.\n\n";
  md << "## Claims and verdicts\n\n" << format_powernorm_claims(records) << "\n";
  md << "## Batch-size ablation (the paper's Figure 5): test BLEU, 4,096 tokens per update\n\n";
  std::vector<PaperColumn> ac;
  for (const auto& [tokens, uf] : powernorm_ablation_batches())
    ac.push_back({std::to_string(tokens), "max_tokens " + std::to_string(tokens) + " × update_freq " + std::to_string(uf), true, 2});
  md << format_paper_table("Model", ac, powernorm_ablation_rows(records)) << "\n"
     << "The statistics of a batch-statistic norm are taken over one micro-batch (max_tokens); gradient accumulation "
        "keeps the update at 4,096 tokens. The paper (IWSLT14, mini-batches 512 to 4K) shows the values only as a "
        "figure: PN above LN at every size, PN-V matching LN only at 4K, BN poor throughout.\n\n";
  md << "## Figures 2-4: batch statistics (probe, `normlab grad batch-stats`)\n\n";
  if (probes.resnet.empty() && probes.mt.empty()) {
    md << "Not run (left out by --parts).\n";
  } else {
    std::vector<BatchStatsRun> all = probes.resnet;
    for (auto& r : all) r.norm = "ResNet-20 CIFAR-10 " + r.norm;
    for (auto r : probes.mt) {
      r.norm = "Transformer Multi30k " + r.norm;
      all.push_back(r);
    }
    md << format_batch_stats_summary(all) << "\n"
       << "Watched layer: the first batch-statistic norm of each model, before each update (plain masked BatchNorm, "
          "the paper's Transformer_BN). Files: figure2-mean.svg, figure2-var.svg (ResNet-BN vs Transformer-BN), "
          "figure3-grad-mean.svg, figure3-grad-var.svg (gradient norms of μ_B and σ²_B), figure4-var.svg, "
          "figure4-grad.svg (Transformer BN vs PN-V); per-run JSON lines under probes/.\n";
  }
  return md.str();
}

}  // namespace nlapp
