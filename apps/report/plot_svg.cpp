#include "report/plot_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "report/atomic_file.h"

namespace nlapp {
namespace {
constexpr double kTitleEm = 0.62;  // average advance of a bold Helvetica/Arial glyph, in ems

// Characters (code points) of a UTF-8 text: what its width depends on.
size_t utf8_length(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string num(double v) {  // coordinate with two decimals
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// Tick label for a linear axis whose ticks are `step` apart.
std::string linear_label(double v, double step) {
  if (std::fabs(v) < step * 1e-9) v = 0.0;  // avoid "-0" and 1e-17
  char buf[48];
  const double mag = std::max(std::fabs(v), step);
  if (mag >= 1e6 || step < 1e-4) {
    std::snprintf(buf, sizeof buf, "%.3g", v);
  } else {
    int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  }
  return buf;
}

std::string log_label(double v) {
  const int e = static_cast<int>(std::floor(std::log10(v) + 1e-9));
  char buf[48];
  if (e >= -3 && e <= 5) {
    std::snprintf(buf, sizeof buf, "%g", v);
  } else {
    const double mant = v / std::pow(10.0, e);
    if (std::fabs(mant - 1.0) < 1e-9) std::snprintf(buf, sizeof buf, "1e%d", e);
    else std::snprintf(buf, sizeof buf, "%ge%d", std::round(mant), e);
  }
  return buf;
}

bool usable(double x, double y, bool log_y) {
  return std::isfinite(x) && std::isfinite(y) && (!log_y || y > 0.0);
}

}  // namespace

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters other than tab/newline are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') out += ' ';
        else out += c;
    }
  }
  return out;
}

std::string series_color(std::size_t i) {
  // Tableau 10: distinguishable, colour-blind-friendlier than the default web colours.
  static const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                   "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  return kPalette[i % 10];
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi))
    throw std::invalid_argument("nice_ticks: non-finite range");
  if (lo > hi) std::swap(lo, hi);
  if (target < 2) target = 2;
  if (hi - lo <= std::max(std::fabs(lo), std::fabs(hi)) * 1e-12) {
    const double pad = lo == 0.0 ? 1.0 : std::fabs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const double raw = (hi - lo) / (target - 1);
  const double p10 = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / p10;
  const double step = (f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0) * p10;
  const double first = std::floor(lo / step + 1e-9) * step;
  const double last = std::ceil(hi / step - 1e-9) * step;
  std::vector<double> t;
  const long n = std::lround((last - first) / step);
  for (long i = 0; i <= n; ++i) {
    double v = first + static_cast<double>(i) * step;
    if (std::fabs(v) < step * 1e-9) v = 0.0;
    t.push_back(v);
  }
  return t;
}

std::vector<double> log_ticks(double lo, double hi) {
  if (!(lo > 0.0) || !(hi > 0.0) || !std::isfinite(lo) || !std::isfinite(hi))
    throw std::invalid_argument("log_ticks: range must be positive and finite");
  if (lo > hi) std::swap(lo, hi);
  const int dlo = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  int dhi = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  if (dhi <= dlo) dhi = dlo + 1;
  const int decades = dhi - dlo;
  std::vector<double> t;
  if (decades < 2) {
    for (int d = dlo; d < dhi; ++d)
      for (double m : {1.0, 2.0, 5.0}) t.push_back(m * std::pow(10.0, d));
    t.push_back(std::pow(10.0, dhi));
    // Trim multiples wholly outside [lo, hi] but keep one tick at or beyond each end.
    while (t.size() > 2 && t[1] <= lo) t.erase(t.begin());
    while (t.size() > 2 && t[t.size() - 2] >= hi) t.pop_back();
    return t;
  }
  const int stride = (decades + 7) / 8;
  const int top = dlo + ((decades + stride - 1) / stride) * stride;
  for (int d = dlo; d <= top; d += stride) t.push_back(std::pow(10.0, d));
  return t;
}

std::string render_line_chart(const PlotSpec& spec, const std::vector<Series>& series) {
  for (const auto& s : series)
    if (s.x.size() != s.y.size())
      throw std::invalid_argument("render_line_chart: series '" + s.name + "' has " +
                                  std::to_string(s.x.size()) + " x values and " +
                                  std::to_string(s.y.size()) + " y values");
  const bool log_y = spec.log_y;
  const double W = std::max(spec.width, 240), H = std::max(spec.height, 160);

  // ---- data ranges over usable points ----
  double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin, ymin = xmin, ymax = -xmin;
  std::size_t usable_points = 0;
  for (const auto& s : series)
    for (std::size_t i = 0; i < s.x.size(); ++i)
      if (usable(s.x[i], s.y[i], log_y)) {
        ++usable_points;
        xmin = std::min(xmin, s.x[i]);
        xmax = std::max(xmax, s.x[i]);
        ymin = std::min(ymin, s.y[i]);
        ymax = std::max(ymax, s.y[i]);
      }
  if (usable_points == 0) {
    xmin = 0; xmax = 1;
    ymin = log_y ? 1 : 0; ymax = log_y ? 10 : 1;
  }
  const std::vector<double> xt = nice_ticks(xmin, xmax);
  const std::vector<double> yt = log_y ? log_ticks(ymin, ymax) : nice_ticks(ymin, ymax);
  const double xstep = xt.size() > 1 ? xt[1] - xt[0] : 1.0;
  const double ystep = yt.size() > 1 ? yt[1] - yt[0] : 1.0;
  // Axis range = tick range, widened by rounding error so every point lies inside the frame.
  const double ax0 = std::min(xt.front(), xmin), ax1 = std::max(xt.back(), xmax);
  const double ay0 = log_y ? std::log10(std::min(yt.front(), ymin)) : std::min(yt.front(), ymin);
  const double ay1 = log_y ? std::log10(std::max(yt.back(), ymax)) : std::max(yt.back(), ymax);

  // ---- layout ----
  std::size_t longest = 0;
  for (const auto& s : series) longest = std::max(longest, s.name.size());
  const double legend_w = series.empty() ? 0.0 : std::min(220.0, 34.0 + 7.0 * longest);
  const double ml = 72, mr = 20 + legend_w, mt = spec.title.empty() ? 16 : 42, mb = 54;
  const double px0 = ml, px1 = std::max(ml + 40, W - mr), py0 = mt, py1 = std::max(mt + 40, H - mb);
  auto X = [&](double x) { return px0 + (x - ax0) / (ax1 - ax0) * (px1 - px0); };
  auto Y = [&](double y) {
    const double v = log_y ? std::log10(y) : y;
    return py1 - (v - ay0) / (ay1 - ay0) * (py1 - py0);
  };

  std::string o;
  o.reserve(4096 + usable_points * 16);
  o += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(W) + "\" height=\"" + num(H) +
       "\" viewBox=\"0 0 " + num(W) + " " + num(H) +
       "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n";
  o += "<rect x=\"0\" y=\"0\" width=\"" + num(W) + "\" height=\"" + num(H) + "\" fill=\"#ffffff\"/>\n";
  if (!spec.title.empty()) {
    // Centred over the plot area where it fits, else over the canvas, in a smaller font when even that is too
    // narrow: a long title is never cut at the edges (kTitleEm: the average width of a bold Helvetica glyph).
    const double len = (double)utf8_length(spec.title), fs = std::max(8.0, std::min(15.0, (W - 20) / (kTitleEm * len)));
    const double half = kTitleEm * fs * len / 2;
    const double cx = std::clamp((px0 + px1) / 2, std::min(W / 2, 10 + half), std::max(W / 2, W - 10 - half));
    o += "<text x=\"" + num(cx) + "\" y=\"24\" text-anchor=\"middle\" font-size=\"" + num(fs) + "\" "
         "font-weight=\"bold\">" + xml_escape(spec.title) + "</text>\n";
  }

  // grid + ticks
  o += "<g class=\"grid\" stroke=\"#e5e5e5\" stroke-width=\"1\">\n";
  for (double t : xt) o += "<line x1=\"" + num(X(t)) + "\" y1=\"" + num(py0) + "\" x2=\"" + num(X(t)) + "\" y2=\"" + num(py1) + "\"/>\n";
  for (double t : yt) o += "<line x1=\"" + num(px0) + "\" y1=\"" + num(Y(t)) + "\" x2=\"" + num(px1) + "\" y2=\"" + num(Y(t)) + "\"/>\n";
  o += "</g>\n";
  o += "<g class=\"axes\" stroke=\"#333333\" stroke-width=\"1\" fill=\"none\">\n";
  o += "<rect x=\"" + num(px0) + "\" y=\"" + num(py0) + "\" width=\"" + num(px1 - px0) + "\" height=\"" + num(py1 - py0) + "\"/>\n";
  o += "</g>\n";
  o += "<g class=\"xticks\" text-anchor=\"middle\" fill=\"#333333\">\n";
  for (double t : xt)
    o += "<text x=\"" + num(X(t)) + "\" y=\"" + num(py1 + 16) + "\">" + xml_escape(linear_label(t, xstep)) + "</text>\n";
  o += "</g>\n";
  o += "<g class=\"yticks\" text-anchor=\"end\" fill=\"#333333\">\n";
  for (double t : yt)
    o += "<text x=\"" + num(px0 - 6) + "\" y=\"" + num(Y(t) + 4) + "\">" +
         xml_escape(log_y ? log_label(t) : linear_label(t, ystep)) + "</text>\n";
  o += "</g>\n";
  if (!spec.xlabel.empty())
    o += "<text x=\"" + num((px0 + px1) / 2) + "\" y=\"" + num(H - 12) + "\" text-anchor=\"middle\">" +
         xml_escape(spec.xlabel) + "</text>\n";
  if (!spec.ylabel.empty())
    o += "<text x=\"16\" y=\"" + num((py0 + py1) / 2) + "\" text-anchor=\"middle\" transform=\"rotate(-90 16 " +
         num((py0 + py1) / 2) + ")\">" + xml_escape(spec.ylabel) + "</text>\n";
  if (usable_points == 0)
    o += "<text x=\"" + num((px0 + px1) / 2) + "\" y=\"" + num((py0 + py1) / 2) +
         "\" text-anchor=\"middle\" fill=\"#999999\">no data</text>\n";

  // series: one polyline per contiguous run of usable points
  for (std::size_t k = 0; k < series.size(); ++k) {
    const auto& s = series[k];
    const std::string col = series_color(k);
    const std::string dash = k >= 10 ? " stroke-dasharray=\"6 3\"" : "";
    o += "<g class=\"series\" fill=\"none\" stroke=\"" + col + "\" stroke-width=\"1.8\"" + dash + ">\n";
    o += "<title>" + xml_escape(s.name) + "</title>\n";
    std::string pts;
    std::size_t run = 0;
    double lastx = 0, lasty = 0;
    auto flush = [&] {
      if (run > 0) {
        o += "<polyline points=\"" + pts + "\"/>\n";
        if (run == 1)  // a lone point would be invisible as a polyline
          o += "<circle cx=\"" + num(lastx) + "\" cy=\"" + num(lasty) + "\" r=\"2\" fill=\"" + col + "\"/>\n";
      }
      pts.clear();
      run = 0;
    };
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!usable(s.x[i], s.y[i], log_y)) {
        flush();
        continue;
      }
      lastx = X(s.x[i]);
      lasty = Y(s.y[i]);
      if (run > 0) pts += ' ';
      pts += num(lastx) + "," + num(lasty);
      ++run;
    }
    flush();
    o += "</g>\n";
  }

  // legend
  if (!series.empty()) {
    o += "<g class=\"legend\">\n";
    const double lx = px1 + 14;
    for (std::size_t k = 0; k < series.size(); ++k) {
      const double ly = py0 + 10 + 18.0 * static_cast<double>(k);
      const std::string dash = k >= 10 ? " stroke-dasharray=\"6 3\"" : "";
      o += "<line x1=\"" + num(lx) + "\" y1=\"" + num(ly) + "\" x2=\"" + num(lx + 20) + "\" y2=\"" + num(ly) +
           "\" stroke=\"" + series_color(k) + "\" stroke-width=\"2.5\"" + dash + "/>\n";
      o += "<text x=\"" + num(lx + 26) + "\" y=\"" + num(ly + 4) + "\" fill=\"#333333\">" +
           xml_escape(series[k].name) + "</text>\n";
    }
    o += "</g>\n";
  }
  o += "</svg>\n";
  return o;
}

void write_line_chart(const std::filesystem::path& path, const PlotSpec& spec,
                      const std::vector<Series>& series) {
  write_file_atomic(path, render_line_chart(spec, series));
}

}  // namespace nlapp
