#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>

namespace fencegate::gateway {

// The deadline of one operation at a time on a client connection (a header read, a response
// write, a wait for admission), kept without touching the system timer for every operation.
// Beast's basic_stream arms its timer for each read and write and cancels it on completion (a
// timer-queue insert, a cancel, a completion and two timerfd_settime calls): on a keep-alive
// connection that is two arms per request.
//
// Here each operation only records its deadline. The timer is re-armed only when that deadline
// comes before the pending wait's expiry; a wait that expires early re-checks the operation
// outstanding then and waits on until that operation's own deadline. On a keep-alive
// connection (reads due after timeouts.idle, writes after timeouts.response_write) the timer
// is armed about twice per timeout period, however many requests pass. One operation at a time
// per instance (the body reads have their own instance); `on_expired` is the owner's single
// expiry action (cancel the socket, refuse the waiting write), fixed at construction.
template <class Owner>
class ClientDeadline {
 public:
  using Clock = std::chrono::steady_clock;
  using OnExpired = void (Owner::*)();

  ClientDeadline(boost::asio::io_context::executor_type executor, OnExpired on_expired)
      : timer_(executor), on_expired_(on_expired) {}

  // An operation begins that must complete by `deadline`. `owner` is kept alive while the
  // timer waits (until Stop(), or the wait's expiry once nothing is outstanding).
  void Begin(Clock::time_point deadline, const std::shared_ptr<Owner>& owner) {
    deadline_ = deadline;
    outstanding_ = true;
    expired_ = false;
    if (waiting_ && wait_at_ <= deadline) return;
    Wait(owner);
  }

  // The same for an owner that is shared (enable_shared_from_this): its shared_ptr is made only
  // when the timer has to be armed, not for every operation.
  void Begin(Clock::time_point deadline, Owner& owner) {
    deadline_ = deadline;
    outstanding_ = true;
    expired_ = false;
    if (waiting_ && wait_at_ <= deadline) return;
    Wait(owner.shared_from_this());
  }

  // The operation completed. True if the deadline passed and `on_expired` ran for it.
  bool End() {
    outstanding_ = false;
    return expired_;
  }

  // The connection is over: cancels the wait, which releases the owner.
  void Stop() {
    outstanding_ = false;
    if (!waiting_) return;
    waiting_ = false;
    ++wait_id_;
    timer_.cancel();
  }

 private:
  void Wait(std::shared_ptr<Owner> owner) {
    waiting_ = true;
    wait_at_ = deadline_;
    const std::uint64_t id = ++wait_id_;
    // Re-arming cancels a later pending wait; its handler sees a stale id and does nothing.
    timer_.expires_at(wait_at_);
    timer_.async_wait([this, id, owner = std::move(owner)](boost::system::error_code ec) mutable {
      if (ec || id != wait_id_) return;
      waiting_ = false;
      if (!outstanding_) return;
      if (Clock::now() >= deadline_) {
        expired_ = true;
        ((*owner).*on_expired_)();
        return;
      }
      Wait(std::move(owner));
    });
  }

  boost::asio::basic_waitable_timer<Clock, boost::asio::wait_traits<Clock>,
                                    boost::asio::io_context::executor_type>
      timer_;
  const OnExpired on_expired_;
  Clock::time_point deadline_{};
  Clock::time_point wait_at_{};
  std::uint64_t wait_id_ = 0;
  bool waiting_ = false;
  bool outstanding_ = false;
  bool expired_ = false;
};

}  // namespace fencegate::gateway
