#pragma once
// The numbers the papers report, in one table (paper_numbers.cpp): every task's paper_reference and
// paper columns, and the paper reports' tables (xu2019_report, powernorm_report), look them up here.
// A plain data module: it includes nothing of tasks/, probes/ or engine/, so any report can build on it.
#include <string>
#include <vector>

namespace nlapp {

/// One cell of a paper's table.
struct PaperValue {
  std::string paper;   ///< "xu2019" (Xu et al. 2019), "shen2020" (PowerNorm, Shen et al. 2020), "ni2024" (LN-G)
  std::string column;  ///< the table column within the paper, e.g. "en-de", "enwiki8", "ptb" (see paper_numbers.cpp)
  std::string norm;    ///< canonical norm name (nn/norm/factory.h)
  double value;        ///< the number (BLEU, accuracy %, BPC, PPL or UAS); NaN where the paper reports divergence
  bool diverged;       ///< the paper prints "Diverge" in this cell
  char status;         ///< shen2020 only (ni-pn-details.md §6): V verified, D derived, I inferred, U unverified; else 0
  std::string source;  ///< where in the paper, e.g. "Tables 1-4"
};

/// Every number of the table, grouped by paper and column.
const std::vector<PaperValue>& paper_values();

/// The cell of (paper, column, norm), or nullptr when the paper has none.
const PaperValue* find_paper_value(const std::string& paper, const std::string& column, const std::string& norm);

/// The number of (paper, column, norm); NaN when the paper has none or reports divergence.
double paper_number(const std::string& paper, const std::string& column, const std::string& norm);

}  // namespace nlapp
