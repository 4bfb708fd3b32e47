#include "report/claims.h"

#include <cstddef>
#include <sstream>
#include <utility>

#include "report/markdown_table.h"
#include "report/welch.h"

namespace nlapp {

std::string Claim::statement() const {
  return column + ": " + better + (higher_is_better ? " > " : " < ") + worse;
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Holds: return "holds";
    case Verdict::Reversed: return "reversed";
    case Verdict::Inconclusive: return "inconclusive";
    case Verdict::NotRun: return "not run";
  }
  return "?";
}

ClaimVerdict judge_claim(const Claim& c, const ClaimCell& better, const ClaimCell& worse) {
  ClaimVerdict v;
  const size_t nb = better.values.size() + better.diverged, nw = worse.values.size() + worse.diverged;
  if (nb == 0 || nw == 0) {
    v.verdict = Verdict::NotRun;
    v.note = std::string("no finished seed of ") + (nb == 0 ? c.better : c.worse);
    return v;
  }
  // Divergence decides when it is all on one side.
  const bool b_all = better.values.empty(), w_all = worse.values.empty();
  if (better.diverged || worse.diverged) {
    if (w_all && !better.diverged) {
      v.verdict = Verdict::Holds;
      v.note = "every seed of " + c.worse + " diverged, none of " + c.better;
    } else if (b_all && !worse.diverged) {
      v.verdict = Verdict::Reversed;
      v.note = "every seed of " + c.better + " diverged, none of " + c.worse;
    } else {
      v.verdict = Verdict::Inconclusive;
      v.note = "diverged seeds: " + c.better + " " + std::to_string(better.diverged) + ", " + c.worse + " " +
               std::to_string(worse.diverged);
    }
    return v;
  }
  double mb = 0, mw = 0;
  for (double x : better.values) mb += x / (double)better.values.size();
  for (double x : worse.values) mw += x / (double)worse.values.size();
  v.diff = c.higher_is_better ? mb - mw : mw - mb;
  if (better.values.size() < 2 || worse.values.size() < 2) {
    v.verdict = Verdict::Inconclusive;
    v.note = "fewer than 2 seeds on a side: no test";
    return v;
  }
  const WelchResult w = welch_t_test(better.values, worse.values);
  v.p = w.p;
  if (w.p < 0.05 && v.diff != 0)
    v.verdict = v.diff > 0 ? Verdict::Holds : Verdict::Reversed;
  else
    v.verdict = Verdict::Inconclusive;
  return v;
}

std::string verdict_summary(const std::vector<ClaimVerdict>& verdicts) {
  int n[4] = {0, 0, 0, 0};
  for (const auto& v : verdicts) ++n[(int)v.verdict];
  return std::to_string(n[0]) + " hold, " + std::to_string(n[1]) + " reversed, " + std::to_string(n[2]) +
         " inconclusive, " + std::to_string(n[3]) + " not run";
}

std::string format_claims(const std::string& paper, const std::vector<Claim>& claims,
                          const std::function<ClaimCell(const Claim&, const std::string&)>& cell,
                          const std::function<int(const std::string&)>& precision) {
  auto paper_text = [](double x, bool div) {  // "—": the paper states the claim without a number
    return div ? std::string("Diverge") : std::isnan(x) ? std::string("—") : format_fixed(x, 2);
  };
  // Every side's cell first: when they do not all hold the same number of seeds (a campaign that ran more
  // seeds for some columns), each cell says how many it averages.
  std::vector<std::pair<ClaimCell, ClaimCell>> cells;
  std::vector<std::size_t> counts;
  for (const auto& c : claims) {
    cells.emplace_back(cell(c, c.better), cell(c, c.worse));
    for (const ClaimCell* x : {&cells.back().first, &cells.back().second})
      if (!x->values.empty()) counts.push_back(x->values.size());
  }
  const bool show_n = seed_counts_differ(counts);
  auto ours_text = [&](const ClaimCell& c, int prec) { return format_seeds(c.values, c.diverged, prec, show_n); };
  std::vector<std::vector<std::string>> rows;
  std::vector<ClaimVerdict> verdicts;
  for (size_t i = 0; i < claims.size(); ++i) {
    const Claim& c = claims[i];
    const int prec = precision(c.column);
    const auto& [b, w] = cells[i];
    const ClaimVerdict v = judge_claim(c, b, w);
    verdicts.push_back(v);
    rows.push_back({c.id, c.source, c.statement(),
                    paper_text(c.paper_better, c.paper_better_diverged) + " vs " + paper_text(c.paper_worse, c.paper_worse_diverged),
                    ours_text(b, prec) + " vs " + ours_text(w, prec), std::isnan(v.diff) ? "—" : format_fixed(v.diff, prec),
                    std::isnan(v.p) ? "—" : format_fixed(v.p, 3),
                    std::string("**") + verdict_name(v.verdict) + "**" + (v.note.empty() ? "" : " (" + v.note + ")")});
  }
  std::ostringstream md;
  md << paper << ", claims in the columns we run: " << verdict_summary(verdicts)
     << ". A claim holds when our difference has the paper's sign and Welch's t-test over seeds gives p < 0.05, "
        "is reversed when significant the other way, and is inconclusive otherwise.\n\n";
  const std::vector<std::string> head = {"claim", "source", "statement", "paper", "ours (mean ± std)", "difference", "p", "verdict"};
  std::vector<Align> align(head.size(), Align::Left);
  align[5] = align[6] = Align::Right;
  md << markdown_table(head, rows, align);
  return md.str();
}

}  // namespace nlapp
