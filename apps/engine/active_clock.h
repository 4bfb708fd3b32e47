#pragma once
// The training clock of a run record (results.json "train_seconds"): wall time, less the time the process
// was stopped (SIGSTOP or Ctrl-Z, then SIGCONT), as `kill -STOP` pauses a long training so that a benchmark
// has the CPU to itself. Without it a record paused for an hour said it trained an hour longer.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace nlapp {

/// Seconds since construction (steady clock), less the time the process spent stopped. A ticker thread
/// wakes every `tick` (100 ms); a gap of more than `gap` (1 s) between two of its wakes counts as stopped
/// time when the process received SIGCONT across it (a handler counts SIGCONT; one more tick is allowed for
/// the signal to arrive), so a thread merely starved by a loaded machine counts as running. Installs the
/// SIGCONT handler once per process (chaining a handler that was there before). Thread-safe.
class ActiveClock {
 public:
  explicit ActiveClock(std::chrono::milliseconds tick = std::chrono::milliseconds(100),
                       std::chrono::milliseconds gap = std::chrono::milliseconds(1000));
  ~ActiveClock();
  ActiveClock(const ActiveClock&) = delete;
  ActiveClock& operator=(const ActiveClock&) = delete;

  /// Wall seconds since construction less the stopped seconds found so far.
  double seconds() const;
  /// Seconds the process was found stopped since construction.
  double stopped_seconds() const;

 private:
  void run();
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0_;
  const Clock::duration tick_, gap_;
  std::atomic<int64_t> stopped_ns_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread ticker_;
};

}  // namespace nlapp
