#pragma once
// Xu et al. 2019 ("Understanding and Improving Layer Normalization"), Tables 1-4 and Figures 1-3 at CPU
// scale: the paper's eight columns, what normlab runs in place of each (or why not), the paper's
// numbers, and the tables and curves built from the experiment runner's records. What
// `normlab reproduce xu2019` writes; docs/reproduce.md explains the stand-ins.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/experiment.h"
#include "report/claims.h"
#include "report/paper_table.h"

namespace nlapp {

/// One of the paper's columns and what runs in its place.
struct XuColumn {
  std::string id;            ///< paper column: en-de, de-en, en-vi, enwiki8, rt, sst5, mnist, ptb
  std::string paper_title;   ///< "En-De (+)"
  std::string paper_data;    ///< the paper's data and model, e.g. "WMT14 En-De, Transformer big (12 layers)"
  bool higher_is_better = true;
  std::string key;           ///< name for --tasks (mt, lm, rt, sst5, mnist, parse); "" = not run at CPU scale
  std::string ours;          ///< short name of the data we run, e.g. "Multi30k En→De"
  std::string task, config;  ///< the task and its config
  nlohmann::json overrides = nlohmann::json::object();  ///< extra settings (e.g. the MNIST folder)
  std::string metric;        ///< test metric key: bleu, bpc, acc, uas
  std::string not_run;       ///< why the column is not run (no stand-in at CPU scale, or left out by --tasks); "" = run
};

/// Where the command finds data: `data_root` holds the shared raw data (../shared/data), `data_bin`
/// the corpora that `normlab data prepare` wrote (multi30k, rt, sst5).
struct XuPaths {
  std::string data_root = "../shared/data";
  std::string data_bin = "data-bin";
};

/// The eight columns in the paper's order.
std::vector<XuColumn> xu2019_columns(const XuPaths& paths);

/// The runs of the columns in `tasks` (xu2019_task_keys names) × the seven variants × seeds 1..`seeds`,
/// labelled "<key>/<variant>-seed<n>", tagged {column, variant, seed}, registered as
/// xu2019/<key>/<variant>/seed<n>. The columns with a key not in `tasks` are marked not run ("left out
/// by --tasks").
std::vector<ExperimentRun> xu2019_runs(std::vector<XuColumn>& columns, const std::vector<std::string>& tasks, int seeds);

/// The --tasks names that run something (mt, lm, rt, sst5, mnist, parse).
std::vector<std::string> xu2019_task_keys();

/// The paper's number for (column id, variant), or NaN when the paper has none or reports "Diverge"
/// (see xu2019_paper_diverged). Variants are normlab's norm names (none, layernorm, ...).
double xu2019_paper(const std::string& column, const std::string& variant);
/// True where the paper reports "Diverge" (En-De: w/o Norm, DetachNorm, Detach Variance).
bool xu2019_paper_diverged(const std::string& column, const std::string& variant);

/// The paper's row label of a variant: none → "w/o Norm", detach-mean → "Detach Mean", ...
std::string xu2019_row_label(const std::string& variant);

/// One of the paper's tables: its rows, and whether an improvement row (last row vs first) follows.
struct XuTable {
  std::string name;     ///< "Table 1", "Table 2 (top)", ...
  std::string caption;  ///< the paper's finding
  std::vector<std::string> variants;
  bool improvement = false;
};
/// Tables 1, 2 (top), 2 (bottom), 3 and 4 with the paper's rows.
const std::vector<XuTable>& xu2019_tables();

/// The variants any table needs (the seven of the LayerNorm family, in table order).
std::vector<std::string> xu2019_variants();

/// Rows of `table` from records tagged {"column": XuColumn::key, "variant": norm, "seed": n}: ours
/// from the records' test metric, the paper's numbers, "not run" for columns without a key, "pending"
/// before any seed finished.
std::vector<PaperRow> xu2019_rows(const XuTable& table, const std::vector<XuColumn>& columns,
                                  const std::vector<RunRecord>& records);

/// The comparisons of Tables 1-4 (LayerNorm vs w/o Norm, LayerNorm-simple vs LayerNorm, DetachNorm vs
/// w/o Norm, LayerNorm-simple vs DetachNorm, detach-mean / detach-variance vs LayerNorm-simple, detach-mean
/// vs detach-variance, AdaNorm vs LayerNorm).
const std::vector<Comparison>& xu2019_comparisons();

/// Every claim of xu2019_comparisons() in every column we run (columns with a key), the direction taken
/// from the paper's numbers of the column that ours stands in for (derive_claims).
std::vector<Claim> xu2019_claims(const std::vector<XuColumn>& columns);

/// Our cell of (column key, variant) from the records: finished seeds' test metric and diverged seeds.
ClaimCell xu2019_claim_cell(const XuColumn& column, const std::string& variant, const std::vector<RunRecord>& records);

/// The claims section of results.md: one summary line ("Xu et al. 2019: 3 hold, ...") and a table of
/// every claim with the paper's numbers, ours (mean ± std), the difference, p and the verdict.
std::string format_xu2019_claims(const std::vector<XuColumn>& columns, const std::vector<RunRecord>& records);

/// Tables 1-4 (five tables), each under `heading` + its name (e.g. "## Table 1") with the paper's caption.
std::string format_xu2019_tables(const std::vector<XuColumn>& columns, const std::vector<RunRecord>& records,
                                 const std::string& heading);

/// The whole results.md: a header (`setup`: one line on budget and seeds), the five tables, the data
/// of every column (ours from the runs' data summaries, the paper's) and the list of figures.
std::string format_xu2019_report(const std::vector<XuColumn>& columns, const std::vector<RunRecord>& records,
                                 const std::string& setup);

/// Figures 1-3 as SVG (train loss and validation curves of seed 1) into `out`; returns the file names.
/// Figure 1: LayerNorm vs LayerNorm-simple (mt, lm); Figure 2: LayerNorm-simple vs DetachNorm (mt);
/// Figure 3: LayerNorm vs AdaNorm (mt, parse). A figure without finished runs is still written (no data).
std::vector<std::string> write_xu2019_figures(const std::filesystem::path& out, const std::vector<XuColumn>& columns,
                                              const std::vector<RunRecord>& records);

}  // namespace nlapp
