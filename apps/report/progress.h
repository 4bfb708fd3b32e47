#pragma once
// Training progress line: epoch, step/total, smoothed loss, items/s, elapsed and ETA.
// On a terminal the line is rewritten in place with '\r'; otherwise (CI logs, files) a full
// line is printed at most every `interval_s` seconds so logs stay short.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

namespace nlapp {

/// Formats a duration as hh:mm:ss (hours keep counting past 99, e.g. "123:04:05"); negative,
/// NaN or infinite durations give "--:--:--". Fractions of a second are rounded.
std::string format_hms(double seconds);

/// Settings of a ProgressPrinter.
struct ProgressOptions {
  std::int64_t total_steps = 0;   ///< steps in the whole run (0 = unknown: no ETA)
  int total_epochs = 0;           ///< epochs in the run (0 = print the epoch without "/N")
  double ema_beta = 0.98;         ///< loss smoothing: ema = beta*ema + (1-beta)*loss (bias-corrected)
  double interval_s = 10.0;       ///< non-TTY: seconds between printed lines
  double tty_interval_s = 0.1;    ///< TTY: minimum seconds between redraws
  std::string unit = "img";       ///< what is counted per second ("img", "tok", ...)
  std::optional<bool> tty;        ///< force TTY mode on/off; default: isatty(stdout)
  std::function<double()> clock;  ///< seconds from any origin; default: steady_clock
};

/// Prints a progress line for a training loop. Not thread-safe; call from the training thread.
class ProgressPrinter {
 public:
  /// Prints to `out` (default std::cout); the start time is taken now from the clock.
  explicit ProgressPrinter(ProgressOptions opts, std::ostream* out = nullptr);

  /// Records one finished step: `step` is the global number of steps done so far (1-based,
  /// out of total_steps), `loss` this step's loss, `items` the items (images, tokens) it
  /// processed. Prints when due (see class comment).
  /// A NaN `loss` means "not read this step" (the trainer reads its losses once per log interval and
  /// passes them to observe_loss): the smoothed loss is left as it is.
  void update(int epoch, std::int64_t step, double loss, std::int64_t items);
  /// Adds a loss read off the device (the mean of the last log interval) to the smoothed loss.
  void observe_loss(double loss);
  /// Sets the learning rate shown in the line from now on ("lr 1.00e-03"; not shown before the first call).
  void set_lr(double lr) { lr_ = lr; }

  /// Prints a message on its own line without garbling the TTY progress line.
  void message(const std::string& text);

  /// Prints the final state (always) and ends the line.
  void finish();

  /// The current progress line, e.g.
  /// "epoch 3/20  step 1200/34380  loss 0.4123  lr 1.00e-03  3512 img/s  elapsed 00:01:23  eta 00:12:34"
  /// ("loss -" until a loss has been read: a device run reads them once per log interval).
  std::string line() const;

  /// Bias-corrected exponential moving average of the losses seen (NaN before the first).
  double smoothed_loss() const;
  /// Items per second since construction (0 before any time has passed).
  double items_per_second() const;
  /// Seconds since construction.
  double elapsed() const;
  /// Estimated seconds left (NaN when total_steps is unknown or no step is done).
  double eta() const;
  /// Number of lines/redraws written so far (for tests).
  int prints() const { return prints_; }

 private:
  void print(bool final);
  double now() const;

  ProgressOptions opts_;
  std::ostream* out_;
  bool tty_;
  double t0_, last_print_ = -1e300;
  int epoch_ = 0;
  std::int64_t step_ = 0, items_ = 0, updates_ = 0;
  double ema_ = 0.0, ema_weight_ = 0.0;
  double lr_ = -1.0;
  std::int64_t start_step_ = -1;  // step before the first update() of this process
  std::size_t last_len_ = 0;
  int prints_ = 0;
  bool line_open_ = false;
};

}  // namespace nlapp
