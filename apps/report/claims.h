#pragma once
// A paper's claims as data, and their verdicts from our runs over seeds. A claim compares two cells of a
// results table: "in column C, variant A beats variant B" (higher or lower metric as the column says),
// with the paper's numbers for both. The verdict (Welch's t-test over seeds, report/welch.h):
//   holds        the difference has the claimed sign and p < 0.05;
//   reversed     the difference has the other sign and p < 0.05;
//   inconclusive otherwise (p >= 0.05, fewer than two seeds on a side, or mixed divergence);
//   not run      no finished seed on one side.
// A cell the paper reports as "Diverge" is worse than any number; where ours diverges in every seed of
// the claimed-worse variant and in none of the other, the claim holds (and the reverse is reversed).
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace nlapp {

/// One claim: in `column`, `better` beats `worse` on the column's metric.
struct Claim {
  std::string id;        ///< e.g. "T1-simple-vs-ln/rt"
  std::string source;    ///< e.g. "Table 1, RT"
  std::string column;    ///< our column key (registry column), e.g. "rt"
  std::string better, worse;  ///< variant names (norm names)
  bool higher_is_better = true;
  double paper_better = std::numeric_limits<double>::quiet_NaN();  ///< NaN with paper_*_diverged: "Diverge"
  double paper_worse = std::numeric_limits<double>::quiet_NaN();
  bool paper_better_diverged = false, paper_worse_diverged = false;
  /// "rt: layernorm-simple > layernorm" ('<' where lower is better).
  std::string statement() const;
};

/// A cell of ours: the finished seeds' values and how many seeds diverged.
struct ClaimCell {
  std::vector<double> values;
  int diverged = 0;
};

enum class Verdict { Holds, Reversed, Inconclusive, NotRun };

/// "holds", "reversed", "inconclusive", "not run".
const char* verdict_name(Verdict v);

/// A claim's verdict and the numbers behind it.
struct ClaimVerdict {
  Verdict verdict = Verdict::NotRun;
  double diff = std::nan("");  ///< mean(better) − mean(worse) of ours, in the claimed direction (> 0 agrees)
  double p = std::nan("");     ///< Welch p-value (NaN when not tested)
  std::string note;            ///< why, when not a t-test ("1 seed", "all seeds of X diverged", ...)
};

/// The verdict of `c` from our cells (the file comment gives the rules; alpha = 0.05).
ClaimVerdict judge_claim(const Claim& c, const ClaimCell& better, const ClaimCell& worse);

/// A comparison a paper makes across its columns (e.g. Table 1: LayerNorm-simple vs LayerNorm).
struct Comparison {
  std::string id;      ///< e.g. "T1-simple-vs-ln"
  std::string source;  ///< e.g. "Table 1"
  std::string a, b;    ///< the two variants; which one is better in a column comes from the paper's numbers
};

/// One column of a paper table for deriving claims.
struct ClaimColumn {
  std::string key;    ///< our column key
  std::string title;  ///< the paper's column name, e.g. "RT"
  bool higher_is_better = true;
};

/// The claims of `comparisons` in `columns`: in each column the paper's better variant is the one with
/// the better number ("Diverge" is worst). `paper(column key, variant)` gives the paper's number (NaN:
/// none) and `diverged(column key, variant)` whether it reports "Diverge". Columns where the paper has
/// no number for a side, or the two are equal (both "Diverge" included), make no claim.
template <class Paper, class Diverged>
std::vector<Claim> derive_claims(const std::vector<Comparison>& comparisons, const std::vector<ClaimColumn>& columns,
                                 Paper paper, Diverged diverged) {
  std::vector<Claim> out;
  for (const auto& cmp : comparisons)
    for (const auto& col : columns) {
      const bool da = diverged(col.key, cmp.a), db = diverged(col.key, cmp.b);
      const double pa = paper(col.key, cmp.a), pb = paper(col.key, cmp.b);
      if ((da && db) || (!da && std::isnan(pa)) || (!db && std::isnan(pb)) || (!da && !db && pa == pb)) continue;
      const bool a_better = db || (!da && (col.higher_is_better ? pa > pb : pa < pb));
      Claim c;
      c.id = cmp.id + "/" + col.key;
      c.source = cmp.source + ", " + col.title;
      c.column = col.key;
      c.higher_is_better = col.higher_is_better;
      c.better = a_better ? cmp.a : cmp.b;
      c.worse = a_better ? cmp.b : cmp.a;
      c.paper_better = a_better ? pa : pb;
      c.paper_worse = a_better ? pb : pa;
      c.paper_better_diverged = a_better ? da : db;
      c.paper_worse_diverged = a_better ? db : da;
      out.push_back(c);
    }
  return out;
}

/// The counts of a list of verdicts: "4 hold, 1 reversed, 10 inconclusive, 17 not run".
std::string verdict_summary(const std::vector<ClaimVerdict>& verdicts);

/// A paper's claims section (markdown): one summary line "<paper>, claims ...: <verdict_summary>." with
/// the rule, then a table of every claim: id, source, statement, the paper's two numbers, ours (mean ±
/// std, `precision(column)` decimals; "(n=K)" after each when the cells hold different numbers of seeds), the
/// difference, p and the verdict. `cell(claim, variant)` gives our cell of the claim's column.
std::string format_claims(const std::string& paper, const std::vector<Claim>& claims,
                          const std::function<ClaimCell(const Claim&, const std::string&)>& cell,
                          const std::function<int(const std::string&)>& precision);

}  // namespace nlapp
