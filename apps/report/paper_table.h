#pragma once
// A paper's results table with ours beside it: rows are model variants, columns are data sets, every
// cell "ours (paper X)" where ours is the mean ± std over seeds, or a status ("not run",
// "pending", "diverged"). Used by `normlab reproduce xu2019` and `normlab reproduce powernorm`.
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace nlapp {

/// One column: a data set of the paper and what we ran in its place.
struct PaperColumn {
  std::string id;       ///< key of the cells, e.g. "en-de"
  std::string header;   ///< the paper's column title with the data set we used, e.g. "En-De (+) · ours: Multi30k"
  bool higher_is_better = true;
  int precision = 2;    ///< decimals of our values
};

/// One cell: the paper's number and ours.
struct PaperCell {
  double paper = std::numeric_limits<double>::quiet_NaN();  ///< NaN: not reported
  std::string paper_text;       ///< replaces the paper's number when set, e.g. "Diverge" or "35.5 [U]"
  std::vector<double> ours;     ///< one value per finished seed
  int diverged = 0;             ///< seeds that diverged
  std::string status;           ///< shown instead of ours when set: "not run", "pending"
  bool derived = false;         ///< ours is computed from other cells (improvement_row), not one value per seed
};

/// One row: a label (e.g. "LayerNorm-simple") and its cells by column id (missing = empty cell).
struct PaperRow {
  std::string label;
  std::map<std::string, PaperCell> cells;
};

/// "ours (paper P)": ours as format_mean_std with the column's precision, "diverged" when every seed
/// diverged, a " (k diverged)" note when some did, the status when set, "—" when nothing; the paper
/// part is paper_text, else the number with two decimals, else left out. `show_n`: " (n=K)" after ours, the
/// number of finished seeds (format_paper_table sets it when the table's cells hold different numbers).
std::string format_paper_cell(const PaperCell& c, int precision, bool show_n = false);

/// The improvement row of two rows (Xu et al. Table 2): per column, to.mean − from.mean when higher is
/// better, from.mean − to.mean otherwise, for ours and for the paper (NaN → "—").
PaperRow improvement_row(const std::string& label, const PaperRow& from, const PaperRow& to,
                         const std::vector<PaperColumn>& columns);

/// A markdown table: first column the row labels (header `first_header`), then one per column; every cell
/// names its seed count when the cells' counts differ.
std::string format_paper_table(const std::string& first_header, const std::vector<PaperColumn>& columns,
                               const std::vector<PaperRow>& rows);

/// Mean of `v`, NaN when empty.
double mean_of(const std::vector<double>& v);

}  // namespace nlapp
