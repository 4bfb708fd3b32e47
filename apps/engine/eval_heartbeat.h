#pragma once
// A progress line every few seconds while a long evaluation pass runs (validation, the final test), so that
// a pass of minutes (resnet-cifar's validation: 2 min 28 s) is never silent. Tasks evaluate in their own
// loops; the heartbeat runs on its own thread and prints only elapsed time, so it needs nothing from them.
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace nlapp {

/// Seconds between two heartbeat lines (default 10; tests shorten it). Throws std::invalid_argument unless > 0.
void set_eval_heartbeat_seconds(double seconds);
double eval_heartbeat_seconds();

/// While alive, prints "  <what>: N s so far" through `print` every eval_heartbeat_seconds(); a pass
/// shorter than that prints nothing. The destructor stops and joins the thread.
class EvalHeartbeat {
 public:
  EvalHeartbeat(std::string what, std::function<void(const std::string&)> print);
  ~EvalHeartbeat();
  EvalHeartbeat(const EvalHeartbeat&) = delete;
  EvalHeartbeat& operator=(const EvalHeartbeat&) = delete;

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace nlapp
