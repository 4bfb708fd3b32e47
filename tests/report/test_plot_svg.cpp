// Tests for apps/common/plot_svg: well-formed SVG, nice ticks, NaN gaps, XML escaping.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "report/atomic_file.h"
#include "report/plot_svg.h"

using namespace nlapp;

namespace {

// Minimal XML well-formedness check: every tag balanced and properly nested, attribute values
// quoted, entities known. Returns an error message ("" when well-formed).
std::string check_xml(const std::string& s) {
  std::vector<std::string> stack;
  std::size_t i = 0;
  bool root_seen = false;
  while (i < s.size()) {
    if (s[i] == '&') {
      std::size_t semi = s.find(';', i);
      if (semi == std::string::npos) return "unterminated entity";
      std::string ent = s.substr(i, semi - i + 1);
      if (ent != "&amp;" && ent != "&lt;" && ent != "&gt;" && ent != "&quot;" && ent != "&apos;")
        return "unknown entity " + ent;
      i = semi + 1;
      continue;
    }
    if (s[i] == '>') return "stray '>' in text at " + std::to_string(i);
    if (s[i] != '<') { ++i; continue; }
    std::size_t end = s.find('>', i);
    if (end == std::string::npos) return "unterminated tag";
    std::string tag = s.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.empty()) return "empty tag";
    if (tag[0] == '?' || tag[0] == '!') continue;
    if (tag.find('<') != std::string::npos) return "'<' inside tag " + tag;
    // quotes must balance inside the tag
    if (std::count(tag.begin(), tag.end(), '"') % 2 != 0) return "unbalanced quotes in " + tag;
    if (tag[0] == '/') {
      std::string name = tag.substr(1);
      if (stack.empty() || stack.back() != name) return "mismatched </" + name + ">";
      stack.pop_back();
      continue;
    }
    bool self_closing = tag.back() == '/';
    std::string name = tag.substr(0, tag.find_first_of(" \t\n/"));
    if (stack.empty()) {
      if (root_seen) return "second root element " + name;
      root_seen = true;
    }
    if (!self_closing) stack.push_back(name);
  }
  if (!stack.empty()) return "unclosed <" + stack.back() + ">";
  if (!root_seen) return "no root element";
  return "";
}

std::size_t count(const std::string& s, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

// All polyline point lists in document order.
std::vector<std::string> polylines(const std::string& svg) {
  std::vector<std::string> out;
  std::regex re("<polyline points=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

std::size_t point_count(const std::string& pts) {
  std::istringstream in(pts);
  std::string p;
  std::size_t n = 0;
  while (in >> p) ++n;
  return n;
}

bool is_nice_step(double step) {
  const double p = std::pow(10.0, std::floor(std::log10(step) + 1e-9));
  const double m = step / p;
  return std::fabs(m - 1) < 1e-6 || std::fabs(m - 2) < 1e-6 || std::fabs(m - 5) < 1e-6;
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST_CASE("svg: chart is well-formed and names every series", "[report][svg]") {
  std::vector<Series> s = {{"layernorm", {0, 1, 2, 3}, {2.3, 1.1, 0.7, 0.5}},
                           {"adanorm", {0, 1, 2, 3}, {2.3, 1.0, 0.6, 0.4}},
                           {"none", {0, 1, 2}, {2.4, 1.5, 0.9}}};
  PlotSpec spec{"Train loss", "epoch", "loss"};
  const std::string svg = render_line_chart(spec, s);
  CHECK(check_xml(svg) == "");
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  CHECK(svg.find(">Train loss</text>") != std::string::npos);
  CHECK(svg.find(">epoch</text>") != std::string::npos);
  CHECK(svg.find(">loss</text>") != std::string::npos);
  for (auto& ser : s) CHECK(count(svg, ">" + ser.name + "</text>") == 1);  // legend entry
  auto pl = polylines(svg);
  REQUIRE(pl.size() == 3);
  CHECK(point_count(pl[0]) == 4);
  CHECK(point_count(pl[1]) == 4);
  CHECK(point_count(pl[2]) == 3);
  // distinct colours per series
  CHECK(series_color(0) != series_color(1));
  CHECK(svg.find("stroke=\"" + series_color(0) + "\"") != std::string::npos);
  CHECK(svg.find("stroke=\"" + series_color(2) + "\"") != std::string::npos);
}

TEST_CASE("svg: NaN and inf points become gaps", "[report][svg]") {
  Series a{"a", {0, 1, 2, 3, 4, 5, 6}, {1, 2, kNaN, 3, 4, kInf, 5}};
  Series b{"b", {0, kNaN, 2}, {1, 1, 1}};
  const std::string svg = render_line_chart(PlotSpec{"t", "x", "y"}, {a, b});
  CHECK(check_xml(svg) == "");
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(svg.find("inf") == std::string::npos);
  auto pl = polylines(svg);
  // a: [0,1] [3,4] [6] ; b: [0] [2]
  REQUIRE(pl.size() == 5);
  std::size_t total = 0;
  for (auto& p : pl) total += point_count(p);
  CHECK(total == 5 + 2);  // polyline points == finite points
  CHECK(point_count(pl[0]) == 2);
  CHECK(point_count(pl[1]) == 2);
  CHECK(point_count(pl[2]) == 1);
}

TEST_CASE("svg: empty series and all-NaN data still render", "[report][svg]") {
  SECTION("no series at all") {
    const std::string svg = render_line_chart(PlotSpec{"empty", "x", "y"}, {});
    CHECK(check_xml(svg) == "");
    CHECK(svg.find("no data") != std::string::npos);
    CHECK(polylines(svg).empty());
  }
  SECTION("empty and all-NaN series") {
    const std::string svg =
        render_line_chart(PlotSpec{"e", "x", "y"}, {{"empty", {}, {}}, {"nan", {0, 1}, {kNaN, kNaN}}});
    CHECK(check_xml(svg) == "");
    CHECK(svg.find(">empty</text>") != std::string::npos);
    CHECK(polylines(svg).empty());
  }
  SECTION("mismatched lengths throw") {
    CHECK_THROWS_AS(render_line_chart(PlotSpec{}, {{"bad", {0, 1}, {1}}}), std::invalid_argument);
  }
}

TEST_CASE("svg: XML special characters are escaped", "[report][svg]") {
  Series s{"a<b> & \"c\" 'd'", {0, 1}, {0, 1}};
  PlotSpec spec{"x < y & z", "<x>", "\"y\""};
  const std::string svg = render_line_chart(spec, {s});
  CHECK(check_xml(svg) == "");
  CHECK(svg.find("a&lt;b&gt; &amp; &quot;c&quot; &apos;d&apos;") != std::string::npos);
  CHECK(svg.find("x &lt; y &amp; z") != std::string::npos);
  CHECK(svg.find("a<b>") == std::string::npos);
  CHECK(xml_escape("<&>\"'") == "&lt;&amp;&gt;&quot;&apos;");
}

TEST_CASE("svg: log-y skips non-positive values and uses decade ticks", "[report][svg]") {
  Series s{"loss", {1, 2, 3, 4, 5}, {10.0, 1.0, 0.0, 0.1, 0.01}};
  PlotSpec spec{"log", "step", "loss"};
  spec.log_y = true;
  const std::string svg = render_line_chart(spec, {s});
  CHECK(check_xml(svg) == "");
  auto pl = polylines(svg);
  REQUIRE(pl.size() == 2);
  CHECK(point_count(pl[0]) + point_count(pl[1]) == 4);
  CHECK(svg.find(">0.01</text>") != std::string::npos);
  CHECK(svg.find(">10</text>") != std::string::npos);
}

TEST_CASE("ticks: 1-2-5 steps covering the range", "[report][svg]") {
  struct Case { double lo, hi; };
  for (Case c : {Case{0, 1}, Case{0.13, 0.97}, Case{-3.7, 12.2}, Case{0, 34380}, Case{86.1, 86.9},
                 Case{1e-5, 3e-5}, Case{-1000, -10}, Case{2.5, 2.5}, Case{0, 0}}) {
    INFO("range " << c.lo << " .. " << c.hi);
    auto t = nice_ticks(c.lo, c.hi);
    REQUIRE(t.size() >= 2);
    CHECK(t.size() <= 12);
    const double step = t[1] - t[0];
    CHECK(t.front() <= c.lo + 1e-9 * step);
    CHECK(t.back() >= c.hi - 1e-9 * step);
    CHECK(is_nice_step(step));
    for (std::size_t i = 1; i < t.size(); ++i) CHECK(t[i] - t[i - 1] == Approx(step));
    // each tick is a multiple of the step
    for (double v : t) CHECK(std::fabs(v / step - std::round(v / step)) < 1e-6);
  }
  auto u = nice_ticks(0, 1);
  REQUIRE(u.size() == 6);
  for (int i = 0; i < 6; ++i) CHECK(u[i] == Approx(0.2 * i).margin(1e-12));
  auto t = nice_ticks(0, 100);
  CHECK(t == std::vector<double>{0, 20, 40, 60, 80, 100});
  CHECK_THROWS_AS(nice_ticks(0, kNaN), std::invalid_argument);
}

TEST_CASE("ticks: log axis", "[report][svg]") {
  auto t = log_ticks(0.013, 2.7);
  REQUIRE(t.size() == 4);
  CHECK(t[0] == Approx(0.01));
  CHECK(t[1] == Approx(0.1));
  CHECK(t[2] == Approx(1.0));
  CHECK(t[3] == Approx(10.0));
  auto one = log_ticks(0.3, 0.7);  // within one decade: 1-2-5 multiples
  CHECK(one.front() <= 0.3);
  CHECK(one.back() >= 0.7);
  CHECK(one.size() >= 2);
  auto many = log_ticks(1e-20, 1e20);
  CHECK(many.size() <= 10);
  CHECK(many.front() <= 1e-20);
  CHECK(many.back() >= 1e20);
  CHECK_THROWS_AS(log_ticks(0, 1), std::invalid_argument);
}

TEST_CASE("svg: write_line_chart writes atomically", "[report][svg]") {
  auto dir = std::filesystem::temp_directory_path() / ("nl_svg_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto path = dir / "plots" / "loss.svg";
  write_line_chart(path, PlotSpec{"t", "x", "y"}, {{"s", {0, 1}, {1, 2}}});
  REQUIRE(std::filesystem::exists(path));
  CHECK_FALSE(std::filesystem::exists(atomic_temp_path(path)));
  std::ifstream in(path);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(check_xml(content) == "");
  std::filesystem::remove_all(dir);
}

TEST_CASE("svg: a long title beside a wide legend stays inside the canvas (issue 29)", "[report][svg]") {
  // reproduce mnist's train_loss.svg: a title of ~90 characters and seven legend entries; centred over the
  // plot area at 15 px it began left of x = 0.
  std::vector<Series> s;
  for (const char* n : {"none", "layernorm", "layernorm-simple", "detachnorm", "detach-mean", "detach-variance", "adanorm"})
    s.push_back({n, {0, 1, 2}, {2.3, 1.0, 0.5}});
  const std::string title =
      "Training loss (fashion-mnist train 55000 / valid 5000 / test 10000 images, 28x28, seed 1)";
  const std::string svg = render_line_chart({title, "update", "loss (mean over the log interval)", true}, s);
  const auto at = svg.find(">" + title + "</text>");
  REQUIRE(at != std::string::npos);
  const auto open = svg.rfind("<text ", at);
  const std::string tag = svg.substr(open, at - open);
  auto attr = [&](const std::string& name) {
    const auto p = tag.find(name + "=\"");
    REQUIRE(p != std::string::npos);
    return std::stod(tag.substr(p + name.size() + 2));
  };
  const double x = attr("x"), fs = attr("font-size");
  CHECK(tag.find("text-anchor=\"middle\"") != std::string::npos);
  // Bold Helvetica/Arial glyphs average at most 0.62 em: the text spans x ± 0.31·fs·length.
  const double half = 0.31 * fs * (double)title.size();
  CHECK(x - half >= 0);
  CHECK(x + half <= 720);
  CHECK(fs >= 8);
}
