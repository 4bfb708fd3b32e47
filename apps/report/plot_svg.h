#pragma once
// Standalone SVG line charts for experiment curves (train loss, validation accuracy per norm).
// No dependencies; the output opens in any browser and embeds in markdown.
#include <filesystem>
#include <string>
#include <vector>

namespace nlapp {

/// One named curve. `x` and `y` must have the same length; points where x or y is NaN/inf (or
/// y <= 0 on a log axis) are skipped and break the line into separate segments (a visible gap).
struct Series {
  std::string name;
  std::vector<double> x, y;
};

/// Chart settings.
struct PlotSpec {
  std::string title, xlabel, ylabel;
  bool log_y = false;
  int width = 720, height = 420;
};

/// Renders a complete SVG document: title, axis labels, grid, 1-2-5 ticks, one polyline per
/// contiguous run of finite points per series (distinct palette colours) and a legend. Text is
/// XML-escaped. A chart without any finite point still renders (axes over [0,1], "no data").
/// Throws std::invalid_argument when a series has x and y of different lengths.
std::string render_line_chart(const PlotSpec& spec, const std::vector<Series>& series);

/// Renders the chart and writes it to `path` atomically (temp file + rename).
void write_line_chart(const std::filesystem::path& path, const PlotSpec& spec,
                      const std::vector<Series>& series);

/// "Nice" linear tick values covering [lo, hi]: a step of 1, 2 or 5 times a power of ten chosen
/// so there are about `target` ticks; the first tick is <= lo and the last is >= hi.
/// lo == hi is widened to a sensible interval; non-finite input throws std::invalid_argument.
std::vector<double> nice_ticks(double lo, double hi, int target = 6);

/// Ticks for a log axis covering [lo, hi] (both > 0): powers of ten (every k-th decade when the
/// range spans many), with 2 and 5 multiples added when it spans under two decades.
std::vector<double> log_ticks(double lo, double hi);

/// Escapes &, <, >, " and ' for use in XML text and attribute values.
std::string xml_escape(const std::string& s);

/// The colour (#rrggbb) used for the i-th series (a 10-colour palette, cycling).
std::string series_color(std::size_t i);

}  // namespace nlapp
