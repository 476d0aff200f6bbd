#pragma once

#include <time.h>

#include <chrono>

namespace fencegate::adapters {

// "Now" for setting a deadline: late by at most a few milliseconds, never early. Reads the
// kernel's coarse monotonic clock, which the vDSO answers from memory (about 4 ns here, against
// 25 ns for steady_clock::now() on kvm-clock; a proxied request sets five deadlines), and adds
// the clock's resolution (one tick, 4 ms at HZ=250) twice so the result is at or past the
// precise time even if a tick is late. CLOCK_MONOTONIC_COARSE counts from the same origin as
// CLOCK_MONOTONIC, which steady_clock reads, so its time points compare with steady_clock's and
// Asio's timers. Expiry checks and latency measurements use steady_clock::now().
class DeadlineClock {
 public:
  static std::chrono::steady_clock::time_point Now() {
    timespec now;
    ::clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    return std::chrono::steady_clock::time_point(std::chrono::seconds(now.tv_sec) +
                                                 std::chrono::nanoseconds(now.tv_nsec)) +
           kMargin;
  }

  // How far ahead of the precise clock Now() may be.
  static const std::chrono::nanoseconds kMargin;

 private:
  static std::chrono::nanoseconds Margin() {
    timespec resolution;
    ::clock_getres(CLOCK_MONOTONIC_COARSE, &resolution);
    return 2 *
           (std::chrono::seconds(resolution.tv_sec) + std::chrono::nanoseconds(resolution.tv_nsec));
  }
};

inline const std::chrono::nanoseconds DeadlineClock::kMargin = DeadlineClock::Margin();

}  // namespace fencegate::adapters
