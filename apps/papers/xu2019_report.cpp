#include "papers/xu2019_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "nn/norm/factory.h"
#include "report/markdown_table.h"
#include "report/paper_numbers.h"
#include "report/plot_svg.h"

namespace nlapp {
using json = nlohmann::json;
namespace fs = std::filesystem;

std::vector<XuColumn> xu2019_columns(const XuPaths& p) {
  const std::string root = p.data_root, bin = p.data_bin;
  std::vector<XuColumn> c;
  c.push_back({"en-de", "En-De BLEU (+)", "WMT14 En-De, transformer_wmt_en_de_big_t2t (12 layers)", true, "mt",
               "Multi30k En→De", "mt", "multi30k", {{"data", bin + "/multi30k"}}, "bleu", ""});
  c.push_back({"de-en", "De-En BLEU (+)", "IWSLT14 De-En, transformer_iwslt_de_en (12 layers)", true, "", "", "", "", json::object(),
               "bleu", "not run: only the IWSLT14 valid/test sets are in ../shared/data (no training data)"});
  c.push_back({"en-vi", "En-Vi BLEU (+)", "IWSLT15 En-Vi, transformer_wmt_en_de (12 layers)", true, "", "", "", "", json::object(),
               "bleu", "not run: only tst2012/tst2013 are in ../shared/data (no training data)"});
  c.push_back({"enwiki8", "Enwiki8 BPC (−)", "Enwiki8, 12-layer Transformer-XL d 512", false, "lm", "tiny-shakespeare (stands in for Enwiki8)",
               "lm", "tinyshakespeare", json::object(), "bpc", ""});
  c.push_back({"rt", "RT acc (+)", "RT, 4-layer Transformer encoder", true, "rt", "RT (seeded 8,608/964/1,089 split)", "cls", "rt",
               {{"data", bin + "/rt"}}, "acc", ""});
  c.push_back({"sst5", "SST5 acc (+)", "SST-5, 4-layer Transformer encoder", true, "sst5", "SST-5", "cls", "sst5",
               {{"data", bin + "/sst5"}}, "acc", ""});
  c.push_back({"mnist", "MNIST acc (+)", "MNIST, 3-layer CNN, 20 epochs", true, "mnist", "MNIST", "mnist", "default",
               {{"data", root + "/mnist"}}, "acc", ""});
  c.push_back({"ptb", "PTB UAS (+)", "PTB WSJ §23, Chen & Manning MLP parser", true, "parse", "UD English EWT (stands in for PTB)",
               "parse", "ud-ewt", {{"data", root + "/ud-english-ewt"}}, "uas", ""});
  return c;
}

std::vector<ExperimentRun> xu2019_runs(std::vector<XuColumn>& cols, const std::vector<std::string>& tasks, int seeds) {
  auto asked = [&](const XuColumn& c) { return std::find(tasks.begin(), tasks.end(), c.key) != tasks.end(); };
  std::vector<ExperimentRun> runs;
  for (int seed = 1; seed <= seeds; ++seed)
    for (const auto& c : cols) {
      if (c.key.empty() || !asked(c)) continue;
      for (const auto& v : xu2019_variants()) {
        json o = c.overrides;
        o["norm"] = v;
        o["seed"] = seed;
        runs.push_back({c.key + "/" + v + "-seed" + std::to_string(seed), c.task, c.config, o,
                        {{"column", c.key}, {"variant", v}, {"seed", seed}}, RegistryKey{"xu2019", c.key, v, seed}});
      }
    }
  for (auto& c : cols)
    if (!c.key.empty() && !asked(c)) c.not_run = "not run: left out by --tasks";
  return runs;
}

std::vector<std::string> xu2019_task_keys() { return {"mt", "lm", "rt", "sst5", "mnist", "parse"}; }

double xu2019_paper(const std::string& column, const std::string& v) { return paper_number("xu2019", column, v); }

bool xu2019_paper_diverged(const std::string& column, const std::string& v) {
  const PaperValue* p = find_paper_value("xu2019", column, v);
  return p && p->diverged;
}

std::string xu2019_row_label(const std::string& v) {
  static const std::map<std::string, std::string> l = {
      {"none", "w/o Norm"},        {"layernorm", "LayerNorm"},     {"layernorm-simple", "LayerNorm-simple"},
      {"detachnorm", "DetachNorm"}, {"detach-mean", "Detach Mean"}, {"detach-variance", "Detach Variance"},
      {"adanorm", "AdaNorm"}};
  auto it = l.find(v);
  return it == l.end() ? v : it->second;
}

const std::vector<XuTable>& xu2019_tables() {
  static const std::vector<XuTable> t = {
      {"Table 1", "The bias and gain do not work on six out of eight datasets.", {"none", "layernorm", "layernorm-simple"}, false},
      {"Table 2 (top)", "The effect of forward normalization: DetachNorm vs w/o Norm.", {"none", "detachnorm"}, true},
      {"Table 2 (bottom)", "The effect of the derivatives of the mean and variance: LayerNorm-simple vs DetachNorm.",
       {"detachnorm", "layernorm-simple"}, true},
      {"Table 3", "The derivative of variance is more important than that of mean for deeper networks.",
       {"layernorm-simple", "detach-mean", "detach-variance"}, false},
      {"Table 4", "Results of LayerNorm and AdaNorm.", {"none", "layernorm", "layernorm-simple", "adanorm"}, false},
  };
  return t;
}

std::vector<std::string> xu2019_variants() { return nl::layernorm_family_names(); }

const std::vector<Comparison>& xu2019_comparisons() {
  static const std::vector<Comparison> c = {
      {"T1-ln-vs-none", "Table 1", "layernorm", "none"},
      {"T1-simple-vs-ln", "Table 1", "layernorm-simple", "layernorm"},
      {"T2-detach-vs-none", "Table 2 (top)", "detachnorm", "none"},
      {"T2-simple-vs-detach", "Table 2 (bottom)", "layernorm-simple", "detachnorm"},
      {"T3-mean-vs-simple", "Table 3", "detach-mean", "layernorm-simple"},
      {"T3-var-vs-simple", "Table 3", "detach-variance", "layernorm-simple"},
      {"T3-mean-vs-var", "Table 3", "detach-mean", "detach-variance"},
      {"T4-ada-vs-ln", "Table 4", "adanorm", "layernorm"},
  };
  return c;
}

namespace {
const XuColumn* column_by_key(const std::vector<XuColumn>& columns, const std::string& key) {
  for (const auto& c : columns)
    if (c.key == key) return &c;
  return nullptr;
}
// "RT acc (+)" -> "RT"
std::string short_title(const XuColumn& c) { return c.paper_title.substr(0, c.paper_title.find(' ')); }
}  // namespace

std::vector<Claim> xu2019_claims(const std::vector<XuColumn>& columns) {
  std::vector<ClaimColumn> cc;
  for (const auto& c : columns)
    if (!c.key.empty()) cc.push_back({c.key, short_title(c), c.higher_is_better});
  auto id_of = [&](const std::string& key) { return column_by_key(columns, key)->id; };
  return derive_claims(
      xu2019_comparisons(), cc, [&](const std::string& key, const std::string& v) { return xu2019_paper(id_of(key), v); },
      [&](const std::string& key, const std::string& v) { return xu2019_paper_diverged(id_of(key), v); });
}

ClaimCell xu2019_claim_cell(const XuColumn& col, const std::string& v, const std::vector<RunRecord>& records) {
  ClaimCell cell;
  for (const auto& r : records) {
    if (r.run.tags.value("column", "") != col.key || r.run.tags.value("variant", "") != v) continue;
    if (r.status == RunStatus::Diverged) ++cell.diverged;
    if (r.status == RunStatus::Done) {
      double x = r.test_metric(col.metric);
      if (std::isnan(x)) x = r.test_metric(r.result.value("metric", col.metric));
      if (!std::isnan(x)) cell.values.push_back(x);
    }
  }
  return cell;
}

std::string format_xu2019_claims(const std::vector<XuColumn>& columns, const std::vector<RunRecord>& records) {
  return format_claims(
      "Xu et al. 2019, Tables 1-4", xu2019_claims(columns),
      [&](const Claim& c, const std::string& v) { return xu2019_claim_cell(*column_by_key(columns, c.column), v, records); },
      [&](const std::string& col) { return column_by_key(columns, col)->metric == "bpc" ? 3 : 2; });
}

namespace {
std::vector<PaperColumn> paper_columns(const std::vector<XuColumn>& columns) {
  std::vector<PaperColumn> pc;
  for (const auto& c : columns)
    pc.push_back({c.id, c.paper_title + " · ours: " + (!c.not_run.empty() ? "not run" : c.ours), c.higher_is_better, c.metric == "bpc" ? 3 : 2});
  return pc;
}

PaperCell cell(const XuColumn& col, const std::string& v, const std::vector<RunRecord>& records) {
  PaperCell c;
  c.paper = xu2019_paper(col.id, v);
  if (xu2019_paper_diverged(col.id, v)) c.paper_text = "Diverge";
  if (!col.not_run.empty()) {
    c.status = "not run";
    return c;
  }
  int pending = 0, failed = 0, not_run = 0;
  for (const auto& r : records) {
    if (r.run.tags.value("column", "") != col.key || r.run.tags.value("variant", "") != v) continue;
    if (r.status == RunStatus::Pending) ++pending;
    if (r.status == RunStatus::Failed) ++failed;
    if (r.status == RunStatus::NotRun) ++not_run;
    if (r.status == RunStatus::Diverged) ++c.diverged;
    if (r.status == RunStatus::Done) {
      double x = r.test_metric(col.metric);
      if (std::isnan(x)) x = r.test_metric(r.result.value("metric", col.metric));
      c.ours.push_back(x);
    }
  }
  if (c.status.empty() && c.ours.empty() && !c.diverged && (pending || failed || not_run))
    c.status = failed ? "failed" : pending ? "pending" : "not run";
  return c;
}
}  // namespace

std::vector<PaperRow> xu2019_rows(const XuTable& table, const std::vector<XuColumn>& columns, const std::vector<RunRecord>& records) {
  std::vector<PaperRow> rows;
  for (const auto& v : table.variants) {
    PaperRow r{xu2019_row_label(v), {}};
    for (const auto& col : columns) r.cells[col.id] = cell(col, v, records);
    rows.push_back(r);
  }
  if (table.improvement && rows.size() >= 2)
    rows.push_back(improvement_row("Improvement", rows.front(), rows.back(), paper_columns(columns)));
  return rows;
}

std::string format_xu2019_tables(const std::vector<XuColumn>& columns, const std::vector<RunRecord>& records,
                                 const std::string& heading) {
  std::ostringstream md;
  const auto pc = paper_columns(columns);
  for (const auto& t : xu2019_tables()) {
    md << heading << t.name << "\n\n" << t.caption << "\n\n";
    md << format_paper_table("Models", pc, xu2019_rows(t, columns, records)) << "\n";
  }
  return md.str();
}

std::string format_xu2019_report(const std::vector<XuColumn>& columns, const std::vector<RunRecord>& records, const std::string& setup) {
  std::ostringstream md;
  md << "# Xu et al. 2019, Tables 1-4 at CPU scale\n\n"
     << setup << "\n\nEach cell: ours, mean ± std over the seeds that finished (test metric of the task's checkpoint "
     << "selection), then the paper's number. Ours run smaller models on smaller or other data sets (named in each header "
     << "and listed below): compare the ordering of the rows, not the numbers.\n\n";
  md << format_xu2019_tables(columns, records, "## ");
  md << "## Claims and verdicts\n\n" << format_xu2019_claims(columns, records) << "\n";
  md << "## Data of each column\n\n";
  for (const auto& c : columns) {
    std::string data;
    std::map<std::string, int> precision;  // records of the column by precision (a column runs in one) and device
    for (const auto& r : records) {
      if (r.run.tags.value("column", "") != c.key) continue;
      if (data.empty() && !r.data().empty()) data = r.data();
      if (r.status != RunStatus::Done) continue;
      const json st = r.result.value("settings", json::object());
      ++precision[r.result.value("precision", std::string("float32")) + " on " + st.value("device", std::string("cpu"))];
    }
    md << "- **" << c.paper_title << "**: paper: " << c.paper_data << "; ours: ";
    if (!c.not_run.empty())
      md << c.not_run;
    else
      md << c.ours << " (task `" << c.task << "`, config `" << c.config << "`)" << (data.empty() ? "" : ": " + data);
    for (const auto& [name, n] : precision) md << "; " << n << " finished run(s) in " << name;
    md << "\n";
  }
  md << "\nFigures (seed 1; train loss per update and the validation metric per epoch): figure1-*.svg (LayerNorm vs "
        "LayerNorm-simple), figure2-*.svg (LayerNorm-simple vs DetachNorm), figure3-*.svg (LayerNorm vs AdaNorm).\n";
  return md.str();
}

std::vector<std::string> write_xu2019_figures(const fs::path& out, const std::vector<XuColumn>& columns,
                                              const std::vector<RunRecord>& records) {
  struct Fig {
    int n;
    std::vector<std::string> variants, keys;
  };
  const std::vector<Fig> figs = {{1, {"layernorm", "layernorm-simple"}, {"mt", "lm"}},
                                 {2, {"layernorm-simple", "detachnorm"}, {"mt"}},
                                 {3, {"layernorm", "adanorm"}, {"mt", "parse"}}};
  std::vector<std::string> files;
  for (const auto& f : figs)
    for (const auto& key : f.keys) {
      const XuColumn* col = nullptr;
      for (const auto& c : columns)
        if (c.key == key) col = &c;
      if (!col) continue;
      std::vector<Series> train, valid;
      std::string valid_metric = "metric";
      for (const auto& v : f.variants) {
        Series st{xu2019_row_label(v), {}, {}}, sv{xu2019_row_label(v), {}, {}};
        for (const auto& r : records) {
          if (r.status != RunStatus::Done || r.run.tags.value("column", "") != key || r.run.tags.value("variant", "") != v ||
              r.run.tags.value("seed", 0) != 1)
            continue;
          valid_metric = r.result.value("metric", valid_metric);
          for (const auto& p : r.result["train_loss"]) st.x.push_back(p[0].get<double>()), st.y.push_back(p[1].get<double>());
          for (const auto& p : r.result["valid_curve"]) sv.x.push_back(p[0].get<double>()), sv.y.push_back(p[1].get<double>());
        }
        train.push_back(st);
        valid.push_back(sv);
      }
      const std::string base = "figure" + std::to_string(f.n) + "-" + key;
      write_line_chart(out / (base + "-train.svg"), {"Figure " + std::to_string(f.n) + ": training loss, " + col->ours, "update", "train loss", true},
                       train);
      write_line_chart(out / (base + "-valid.svg"),
                       {"Figure " + std::to_string(f.n) + ": validation " + valid_metric + ", " + col->ours, "epoch", metric_label("valid", valid_metric)},
                       valid);
      files.push_back(base + "-train.svg");
      files.push_back(base + "-valid.svg");
    }
  return files;
}

}  // namespace nlapp
