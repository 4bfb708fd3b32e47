#include "engine/eval_heartbeat.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>

namespace nlapp {
namespace {
std::atomic<double> g_seconds{10.0};
}

void set_eval_heartbeat_seconds(double seconds) {
  if (!(seconds > 0)) throw std::invalid_argument("eval heartbeat interval must be > 0 seconds");
  g_seconds = seconds;
}

double eval_heartbeat_seconds() { return g_seconds; }

EvalHeartbeat::EvalHeartbeat(std::string what, std::function<void(const std::string&)> print) {
  const auto every = std::chrono::duration<double>(eval_heartbeat_seconds());
  thread_ = std::thread([this, what = std::move(what), print = std::move(print), every] {
    const auto t0 = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(m_);
    for (int k = 1;; ++k) {
      if (cv_.wait_until(lock, t0 + k * every, [this] { return done_; })) return;
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      char buf[64];
      std::snprintf(buf, sizeof buf, ": %.0f s so far", s);
      print("  " + what + buf);
    }
  });
}

EvalHeartbeat::~EvalHeartbeat() {
  {
    std::lock_guard<std::mutex> lock(m_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

}  // namespace nlapp
