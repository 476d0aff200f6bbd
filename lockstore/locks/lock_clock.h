#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace fencegate::lockstore {

// The lock table's time source and its only timer. Leases are measured on a monotonic clock,
// never on wall-clock time, so a clock step cannot shorten or extend a lease. Injected so unit
// tests move time by hand.
class LockClock {
 public:
  using Time = std::chrono::steady_clock::time_point;

  virtual ~LockClock() = default;
  virtual Time Now() const = 0;
  // Sets what runs when a wake-up is due. Called once, before any WakeAt.
  virtual void SetHandler(std::function<void()> handler) = 0;
  // Asks for the handler to run at or after `when`; replaces any earlier request. The handler
  // never runs on the thread that calls WakeAt while inside it.
  virtual void WakeAt(Time when) = 0;
};

// std::chrono::steady_clock, with one timer thread that sleeps until the requested time.
class SteadyLockClock final : public LockClock {
 public:
  SteadyLockClock();
  ~SteadyLockClock() override;  // stops and joins the timer thread
  SteadyLockClock(const SteadyLockClock&) = delete;
  SteadyLockClock& operator=(const SteadyLockClock&) = delete;

  Time Now() const override { return std::chrono::steady_clock::now(); }
  void SetHandler(std::function<void()> handler) override;
  void WakeAt(Time when) override;
  // Stops the timer thread; the handler does not run afterwards. Idempotent.
  void Stop();

 private:
  void Run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> handler_;
  Time wake_ = Time::max();
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace fencegate::lockstore
