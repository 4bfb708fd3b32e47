#include "report/progress.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace nlapp {

std::string format_hms(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--:--";
  const long long s = std::llround(seconds);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", s / 3600, (s / 60) % 60, s % 60);
  return buf;
}

ProgressPrinter::ProgressPrinter(ProgressOptions opts, std::ostream* out)
    : opts_(std::move(opts)), out_(out ? out : &std::cout) {
  if (!opts_.clock) {
    opts_.clock = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  }
  tty_ = opts_.tty.has_value() ? *opts_.tty : (::isatty(STDOUT_FILENO) == 1);
  t0_ = now();
}

double ProgressPrinter::now() const { return opts_.clock(); }

double ProgressPrinter::elapsed() const { return now() - t0_; }

double ProgressPrinter::smoothed_loss() const {
  return ema_weight_ > 0 ? ema_ / ema_weight_ : std::nan("");
}

double ProgressPrinter::items_per_second() const {
  const double e = elapsed();
  return e > 0 ? static_cast<double>(items_) / e : 0.0;
}

double ProgressPrinter::eta() const {
  if (opts_.total_steps <= 0 || step_ <= 0) return std::nan("");
  const double left = static_cast<double>(opts_.total_steps - step_);
  if (left <= 0) return 0.0;
  // Steps done by this process (a resumed run starts at its checkpoint's step).
  const double done = static_cast<double>(step_ - start_step_);
  if (done <= 0) return std::nan("");
  return elapsed() / done * left;
}

void ProgressPrinter::observe_loss(double loss) {
  // EMA with bias correction (as Adam does), so early values are not pulled towards 0.
  ema_ = opts_.ema_beta * ema_ + (1.0 - opts_.ema_beta) * loss;
  ema_weight_ = opts_.ema_beta * ema_weight_ + (1.0 - opts_.ema_beta);
}

void ProgressPrinter::update(int epoch, std::int64_t step, double loss, std::int64_t items) {
  if (start_step_ < 0) start_step_ = step - 1;
  epoch_ = epoch;
  step_ = step;
  items_ += items;
  ++updates_;
  if (!std::isnan(loss)) observe_loss(loss);
  const double t = now();
  const double interval = tty_ ? opts_.tty_interval_s : opts_.interval_s;
  if (t - last_print_ >= interval) {
    last_print_ = t;
    print(false);
  }
}

std::string ProgressPrinter::line() const {
  char buf[96];
  std::string s = "epoch ";
  s += std::to_string(epoch_);
  if (opts_.total_epochs > 0) (s += '/') += std::to_string(opts_.total_epochs);
  s += "  step ";
  s += std::to_string(step_);
  if (opts_.total_steps > 0) (s += '/') += std::to_string(opts_.total_steps);
  if (ema_weight_ > 0) {
    std::snprintf(buf, sizeof buf, "  loss %.4f", smoothed_loss());
    s += buf;
  } else {
    s += "  loss -";  // none read yet: a GPU run reads the losses once per log interval, not every step
  }
  if (lr_ >= 0) {
    std::snprintf(buf, sizeof buf, "  lr %.2e", lr_);
    s += buf;
  }
  std::snprintf(buf, sizeof buf, "  %.0f %s/s", items_per_second(), opts_.unit.c_str());
  s += buf;
  s += "  elapsed ";
  s += format_hms(elapsed());
  if (opts_.total_steps > 0) {
    s += "  eta ";
    s += format_hms(eta());
  }
  return s;
}

void ProgressPrinter::print(bool final) {
  const std::string l = line();
  if (tty_) {
    std::string padded = "\r" + l;
    if (l.size() < last_len_) padded += std::string(last_len_ - l.size(), ' ');
    last_len_ = l.size();
    *out_ << padded;
    line_open_ = true;
    if (final) {
      *out_ << '\n';
      line_open_ = false;
      last_len_ = 0;
    }
  } else {
    *out_ << l << '\n';
  }
  out_->flush();
  ++prints_;
}

void ProgressPrinter::message(const std::string& text) {
  if (tty_ && line_open_) {
    *out_ << '\r' << std::string(last_len_, ' ') << '\r';
    line_open_ = false;
    last_len_ = 0;
    last_print_ = -1e300;  // redraw the progress line on the next update
  }
  *out_ << text << '\n';
  out_->flush();
}

void ProgressPrinter::finish() { print(true); }

}  // namespace nlapp
