// ActiveClock, the clock of a record's train_seconds: a process stopped with SIGSTOP and continued with
// SIGCONT does not count the stopped time; a process that merely runs counts all of it.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "engine/active_clock.h"

using nlapp::ActiveClock;

TEST_CASE("active clock: running time counts, stopped time (SIGSTOP .. SIGCONT) does not", "[engine][clock]") {
  const ActiveClock clock;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(clock.seconds() >= 0.29);
  CHECK(clock.stopped_seconds() == 0.0);

  const pid_t self = getpid();
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // async-signal-safe calls only: continue the parent after 1.5 s
    usleep(1500 * 1000);
    kill(self, SIGCONT);
    _exit(0);
  }
  const auto before = std::chrono::steady_clock::now();
  raise(SIGSTOP);  // stopped here until the child's SIGCONT
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
  int status = 0;
  waitpid(child, &status, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // the ticker's next ticks confirm the gap
  INFO("wall " << wall << " s, stopped " << clock.stopped_seconds() << " s, active " << clock.seconds() << " s");
  CHECK(wall > 1.3);
  // The stopped time is the gap between the ticks around the stop, less one tick: within a tick of `wall`,
  // plus how late a loaded machine wakes the ticker afterwards.
  CHECK(clock.stopped_seconds() > wall - 0.3);
  CHECK(clock.stopped_seconds() < wall + 0.25);
  CHECK(clock.seconds() > 0.4);  // 0.3 s + 0.4 s of running, less that lateness
  CHECK(clock.seconds() < 1.2);
}
