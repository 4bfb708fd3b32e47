#include "report/paper_table.h"

#include <cmath>
#include <cstddef>

#include "report/markdown_table.h"

namespace nlapp {

double mean_of(const std::vector<double>& v) {
  if (v.empty()) return std::nan("");
  double s = 0;
  for (double x : v) s += x;
  return s / (double)v.size();
}

std::string format_paper_cell(const PaperCell& c, int precision, bool show_n) {
  const std::string ours = !c.status.empty() ? c.status : format_seeds(c.ours, c.diverged, precision, show_n);
  const std::string paper = !c.paper_text.empty() ? c.paper_text : std::isnan(c.paper) ? "" : format_fixed(c.paper, 2);
  return paper.empty() ? ours : ours + " (paper " + paper + ")";
}

PaperRow improvement_row(const std::string& label, const PaperRow& from, const PaperRow& to,
                         const std::vector<PaperColumn>& columns) {
  PaperRow r{label, {}};
  auto diff = [](double a, double b, bool hib) { return hib ? b - a : a - b; };
  for (const auto& col : columns) {
    auto f = from.cells.find(col.id), t = to.cells.find(col.id);
    if (f == from.cells.end() || t == to.cells.end()) continue;
    PaperCell c;
    c.derived = true;
    const double ours = diff(mean_of(f->second.ours), mean_of(t->second.ours), col.higher_is_better);
    if (std::isfinite(ours)) c.ours = {ours};
    c.paper = diff(f->second.paper, t->second.paper, col.higher_is_better);
    if (std::isnan(c.paper) && (!f->second.paper_text.empty() || !t->second.paper_text.empty())) c.paper_text = "—";
    r.cells[col.id] = c;
  }
  return r;
}

std::string format_paper_table(const std::string& first_header, const std::vector<PaperColumn>& columns,
                               const std::vector<PaperRow>& rows) {
  std::vector<std::string> head{first_header};
  for (const auto& c : columns) head.push_back(c.header);
  // The cells' seed counts: each cell says its n when they differ (some columns ran more seeds).
  std::vector<std::size_t> counts;
  for (const auto& r : rows)
    for (const auto& [id, cell] : r.cells)
      if (cell.status.empty() && !cell.derived && !cell.ours.empty()) counts.push_back(cell.ours.size());
  const bool show_n = seed_counts_differ(counts);
  std::vector<std::vector<std::string>> body;
  for (const auto& r : rows) {
    std::vector<std::string> line{r.label};
    for (const auto& c : columns) {
      auto it = r.cells.find(c.id);
      line.push_back(it == r.cells.end() ? "" : format_paper_cell(it->second, c.precision, show_n && !it->second.derived));
    }
    body.push_back(line);
  }
  std::vector<Align> align(head.size(), Align::Right);
  align[0] = Align::Left;
  return markdown_table(head, body, align);
}

}  // namespace nlapp
