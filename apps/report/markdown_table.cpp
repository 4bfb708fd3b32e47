#include "report/markdown_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace nlapp {
namespace {

std::string escape_cell(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

std::string pad(const std::string& s, std::size_t width, Align a) {
  const std::size_t len = utf8_length(s);
  if (len >= width) return s;
  const std::size_t fill = width - len;
  switch (a) {
    case Align::Right: return std::string(fill, ' ') + s;
    case Align::Center: return std::string(fill / 2, ' ') + s + std::string(fill - fill / 2, ' ');
    case Align::Left: default: return s + std::string(fill, ' ');
  }
}

std::string fixed(double v, int precision) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", precision, v);
  return buf;
}

}  // namespace

std::string format_fixed(double v, int precision) { return std::isnan(v) ? "—" : fixed(v, precision); }

std::string format_seeds(const std::vector<double>& values, int diverged, int precision, bool show_n) {
  if (values.empty()) return diverged ? "diverged" : "\u2014";
  return format_mean_std(values, precision) + (show_n ? " (n=" + std::to_string(values.size()) + ")" : "") +
         (diverged ? " (" + std::to_string(diverged) + " diverged)" : "");
}

bool seed_counts_differ(const std::vector<std::size_t>& counts) {
  const auto [lo, hi] = std::minmax_element(counts.begin(), counts.end());
  return lo != counts.end() && *lo != *hi;
}

std::size_t utf8_length(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::string markdown_table(const std::vector<std::string>& header,
                           const std::vector<std::vector<std::string>>& rows,
                           const std::vector<Align>& align) {
  const std::size_t ncol = header.size();
  if (ncol == 0) throw std::invalid_argument("markdown_table: header has no columns");
  std::vector<std::vector<std::string>> cells;
  cells.reserve(rows.size() + 1);
  cells.emplace_back();
  for (auto& h : header) cells.back().push_back(escape_cell(h));
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].size() > ncol)
      throw std::invalid_argument("markdown_table: row " + std::to_string(r) + " has " +
                                  std::to_string(rows[r].size()) + " cells, header has " +
                                  std::to_string(ncol));
    cells.emplace_back();
    for (auto& c : rows[r]) cells.back().push_back(escape_cell(c));
    cells.back().resize(ncol);
  }
  std::vector<Align> al(ncol, Align::Left);
  for (std::size_t c = 0; c < ncol && c < align.size(); ++c) al[c] = align[c];
  std::vector<std::size_t> width(ncol, 3);  // a separator needs at least 3 characters
  for (auto& row : cells)
    for (std::size_t c = 0; c < ncol; ++c) width[c] = std::max(width[c], utf8_length(row[c]));

  auto line = [&](const std::vector<std::string>& row) {
    std::string s = "|";
    for (std::size_t c = 0; c < ncol; ++c) {
      s += ' ';
      s += pad(row[c], width[c], al[c]);
      s += " |";
    }
    s += '\n';
    return s;
  };
  std::string out = line(cells[0]);
  out += "|";
  for (std::size_t c = 0; c < ncol; ++c) {
    std::string sep(width[c], '-');
    if (al[c] == Align::Left || al[c] == Align::Center) sep[0] = ':';
    if (al[c] == Align::Right || al[c] == Align::Center) sep.back() = ':';
    out += ' ';
    out += sep;
    out += " |";
  }
  out += "\n";
  for (std::size_t r = 1; r < cells.size(); ++r) out += line(cells[r]);
  return out;
}

std::string format_mean_std(const std::vector<double>& values, int precision) {
  if (values.empty()) return "n/a";
  const double n = static_cast<double>(values.size());
  double mean = 0.0;
  for (double v : values) mean += v;
  mean /= n;
  if (values.size() == 1) return fixed(mean, precision);
  double ss = 0.0;
  for (double v : values) ss += (v - mean) * (v - mean);
  const double sd = std::sqrt(ss / (n - 1.0));
  return fixed(mean, precision) + " \u00B1 " + fixed(sd, precision);
}

}  // namespace nlapp
