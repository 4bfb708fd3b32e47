#include "engine/active_clock.h"

#include <signal.h>

#include <cstdint>
#include <cstring>
#include <mutex>

namespace nlapp {

namespace {
std::atomic<uint64_t> g_continued{0};  // SIGCONT deliveries to this process
struct sigaction g_previous;           // the handler that was installed before ours

void on_sigcont(int sig, siginfo_t* info, void* ctx) {
  g_continued.fetch_add(1, std::memory_order_relaxed);  // lock-free: async-signal-safe
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction) g_previous.sa_sigaction(sig, info, ctx);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN && g_previous.sa_handler) {
    g_previous.sa_handler(sig);
  }
}

void install_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigcont;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCONT, &sa, &g_previous);
  });
}
}  // namespace

ActiveClock::ActiveClock(std::chrono::milliseconds tick, std::chrono::milliseconds gap)
    : t0_(Clock::now()), tick_(tick), gap_(gap) {
  install_handler();
  ticker_ = std::thread([this] { run(); });
}

ActiveClock::~ActiveClock() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  ticker_.join();
}

void ActiveClock::run() {
  auto last = Clock::now();
  uint64_t seen = g_continued.load();
  Clock::duration pending{0};  // a long gap waiting for its SIGCONT (at most one more tick)
  uint64_t pending_since = 0;  // SIGCONT count before that gap
  int pending_ticks = 0;
  std::unique_lock<std::mutex> l(mu_);
  while (!cv_.wait_for(l, tick_, [this] { return stop_; })) {
    const auto now = Clock::now();
    const uint64_t c = g_continued.load();
    if (now - last > gap_) {  // asleep for a tick, woken much later: stopped, or starved
      pending = now - last - tick_;
      pending_since = seen;
      pending_ticks = 0;
    }
    if (pending.count() > 0) {
      if (c != pending_since) {
        stopped_ns_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(pending).count());
        pending = Clock::duration{0};
      } else if (++pending_ticks > 1) {
        pending = Clock::duration{0};  // no SIGCONT came: the machine was busy, the time counts
      }
    }
    seen = c;
    last = now;
  }
}

double ActiveClock::stopped_seconds() const { return (double)stopped_ns_.load() * 1e-9; }

double ActiveClock::seconds() const {
  return std::chrono::duration<double>(Clock::now() - t0_).count() - stopped_seconds();
}

}  // namespace nlapp
