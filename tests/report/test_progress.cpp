// Tests for apps/common/progress: hh:mm:ss, ETA, EMA smoothing, TTY vs log-file printing.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "report/progress.h"

using namespace nlapp;

namespace {
std::size_t count(const std::string& s, char c) {
  std::size_t n = 0;
  for (char x : s) n += (x == c);
  return n;
}
}  // namespace

TEST_CASE("format_hms", "[report][progress]") {
  CHECK(format_hms(0) == "00:00:00");
  CHECK(format_hms(59.4) == "00:00:59");
  CHECK(format_hms(59.6) == "00:01:00");
  CHECK(format_hms(3661) == "01:01:01");
  CHECK(format_hms(86399) == "23:59:59");
  CHECK(format_hms(100 * 3600 + 4 * 60 + 5) == "100:04:05");
  CHECK(format_hms(-1) == "--:--:--");
  CHECK(format_hms(std::numeric_limits<double>::quiet_NaN()) == "--:--:--");
  CHECK(format_hms(std::numeric_limits<double>::infinity()) == "--:--:--");
}

TEST_CASE("progress: ETA, items/s and line contents with an injected clock", "[report][progress]") {
  double t = 1000.0;
  ProgressOptions o;
  o.total_steps = 1000;
  o.total_epochs = 20;
  o.tty = false;
  o.clock = [&] { return t; };
  std::ostringstream out;
  ProgressPrinter p(o, &out);
  CHECK(std::isnan(p.eta()));
  for (int s = 1; s <= 100; ++s) {
    t += 0.5;  // 0.5 s per step of 32 images
    p.update(2, s, 1.0, 32);
  }
  CHECK(p.elapsed() == Approx(50.0));
  CHECK(p.items_per_second() == Approx(64.0));
  CHECK(p.eta() == Approx(450.0));  // 900 steps left at 0.5 s each
  const std::string line = p.line();
  CHECK(line == "epoch 2/20  step 100/1000  loss 1.0000  64 img/s  elapsed 00:00:50  eta 00:07:30");
}

TEST_CASE("progress: loss EMA is bias-corrected", "[report][progress]") {
  double t = 0;
  ProgressOptions o;
  o.ema_beta = 0.5;
  o.tty = false;
  o.clock = [&] { return t; };
  std::ostringstream out;
  ProgressPrinter p(o, &out);
  CHECK(std::isnan(p.smoothed_loss()));
  p.update(1, 1, std::nan(""), 1);  // a device run: the step's loss is not read yet
  CHECK(p.line().rfind("epoch 1  step 1  loss -  ", 0) == 0);  // not "loss nan", which reads as a diverged run
  p.update(1, 1, 4.0, 1);
  CHECK(p.smoothed_loss() == Approx(4.0));  // first value is not pulled towards 0
  p.update(1, 2, 2.0, 1);
  // ema = 0.5*(0.5*4) + 0.5*2 = 2.0, weight = 0.75 -> 2.6667
  CHECK(p.smoothed_loss() == Approx(8.0 / 3.0));
  // no total: no ETA in the line, no "/N" after the epoch
  CHECK(p.line().find("eta") == std::string::npos);
  CHECK(p.line().rfind("epoch 1  step 2  loss 2.6667", 0) == 0);
}

TEST_CASE("progress: non-TTY prints one line per interval", "[report][progress]") {
  double t = 0;
  ProgressOptions o;
  o.total_steps = 1000;
  o.tty = false;
  o.clock = [&] { return t; };  // default interval 10 s
  std::ostringstream out;
  ProgressPrinter p(o, &out);
  for (int s = 1; s <= 1000; ++s) {
    t += 0.1;  // 100 s in all
    p.update(1, s, 0.5, 32);
  }
  p.finish();
  const std::string s = out.str();
  CHECK(count(s, '\r') == 0);
  // first update, then every 10 s (t = 10.1, 20.1, ... 90.1 => 9 more), plus finish
  CHECK(p.prints() == 11);
  CHECK(count(s, '\n') == 11);
  CHECK(s.find("step 1000/1000") != std::string::npos);
  CHECK(s.find("eta 00:00:00") != std::string::npos);
}

TEST_CASE("progress: TTY rewrites one line with \\r and messages do not garble it", "[report][progress]") {
  double t = 0;
  ProgressOptions o;
  o.total_steps = 10;
  o.tty = true;
  o.clock = [&] { return t; };
  std::ostringstream out;
  ProgressPrinter p(o, &out);
  for (int s = 1; s <= 10; ++s) {
    t += 1.0;
    p.update(1, s, 0.5, 32);
    if (s == 5) p.message("validation accuracy 98.7");
  }
  p.finish();
  const std::string s = out.str();
  CHECK(p.prints() == 11);
  CHECK(count(s, '\r') >= 11);
  // only the message and the final line end with a newline
  CHECK(count(s, '\n') == 2);
  CHECK(s.find("\rvalidation accuracy 98.7\n") != std::string::npos);
  CHECK(s.back() == '\n');
}
