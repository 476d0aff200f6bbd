#include "lockstore/locks/lock_clock.h"

namespace fencegate::lockstore {

SteadyLockClock::SteadyLockClock() : thread_([this] { Run(); }) {}

SteadyLockClock::~SteadyLockClock() { Stop(); }

void SteadyLockClock::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void SteadyLockClock::SetHandler(std::function<void()> handler) {
  std::lock_guard lock(mu_);
  handler_ = std::move(handler);
}

void SteadyLockClock::WakeAt(Time when) {
  {
    std::lock_guard lock(mu_);
    wake_ = when;
  }
  cv_.notify_all();
}

void SteadyLockClock::Run() {
  std::unique_lock lock(mu_);
  for (;;) {
    if (stopping_) return;
    if (wake_ == Time::max()) {
      cv_.wait(lock);
      continue;
    }
    if (std::chrono::steady_clock::now() < wake_) {
      cv_.wait_until(lock, wake_);
      continue;
    }
    wake_ = Time::max();
    auto handler = handler_;
    // The handler takes the lock table's mutex and calls WakeAt: run it without ours.
    lock.unlock();
    if (handler) handler();
    lock.lock();
  }
}

}  // namespace fencegate::lockstore
