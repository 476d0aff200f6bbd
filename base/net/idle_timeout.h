#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <utility>

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>

#include "base/net/deadline_clock.h"

namespace fencegate::adapters {

// An idle timeout over a run of operations on one connection (a streamed body: the longest an
// operation may stay outstanding, not a total), without touching the system timer for every
// operation. Beast's basic_stream re-arms its timer on each read or write (two
// timerfd_settime calls), which for a body relayed in 64 KiB pieces costs more than the
// relay itself. Here each operation only records when it began; the timer is armed when no
// wait is pending, and on expiry it checks the operation outstanding then: if that one has
// waited the whole timeout, `on_expired` runs (it cancels the operation); otherwise it waits
// again until that operation's own deadline. So the timer is touched about once per timeout
// period, however many operations run.
class IdleTimeout {
 public:
  using Clock = std::chrono::steady_clock;

  explicit IdleTimeout(boost::asio::io_context::executor_type executor) : timer_(executor) {}

  // An operation begins that must complete within `timeout` (use one timeout per instance).
  // `owner` (which owns this object) is kept alive while the timer waits.
  template <class Owner, class OnExpired>
  void Begin(Clock::duration timeout, const std::shared_ptr<Owner>& owner, OnExpired on_expired) {
    timeout_ = timeout;
    // Never before the true start: the expiry check's precise clock then never cuts it short.
    began_ = DeadlineClock::Now();
    outstanding_ = true;
    expired_ = false;
    // A pending wait ends no later than this operation's deadline and then re-checks it.
    if (!waiting_) Wait(owner, std::move(on_expired));
  }

  // The operation completed. True if it was cancelled by the timeout.
  bool End() {
    outstanding_ = false;
    return expired_;
  }

  // The run of operations is over: cancels the wait, which releases the owner.
  void Stop() {
    if (!waiting_) return;
    waiting_ = false;
    ++wait_id_;
    timer_.cancel();
  }

 private:
  template <class Owner, class OnExpired>
  void Wait(std::shared_ptr<Owner> owner, OnExpired on_expired) {
    waiting_ = true;
    const std::uint64_t id = ++wait_id_;
    timer_.expires_at(began_ + timeout_);
    timer_.async_wait([this, id, owner = std::move(owner),
                       on_expired = std::move(on_expired)](boost::system::error_code ec) mutable {
      // A wait that Stop() cancelled, or that expired just before it did, is stale.
      if (ec || id != wait_id_) return;
      waiting_ = false;
      if (!outstanding_) return;
      if (Clock::now() - began_ >= timeout_) {
        expired_ = true;
        on_expired();
        return;
      }
      Wait(std::move(owner), std::move(on_expired));
    });
  }

  boost::asio::basic_waitable_timer<Clock, boost::asio::wait_traits<Clock>,
                                    boost::asio::io_context::executor_type>
      timer_;
  Clock::duration timeout_{};
  Clock::time_point began_{};
  std::uint64_t wait_id_ = 0;
  bool waiting_ = false;
  bool outstanding_ = false;
  bool expired_ = false;
};

}  // namespace fencegate::adapters
