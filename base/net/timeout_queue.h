#pragma once

#include <chrono>
#include <memory>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/net/inline_handler.h"

namespace fencegate::adapters {

// The idle timeouts of many operations on one thread that all wait at most the same duration,
// kept with one system timer. With one duration, deadlines come in the order operations begin,
// so the queue is a FIFO list: beginning an operation appends it, ending one unlinks it, both
// O(1) without touching the timer. The timer waits for the head's deadline only; when it fires
// it expires every operation due and then waits for the new head. An idle timer per exchange
// armed and cancelled the system timer on every request (a timer-heap insert, a removal and a
// cancelled-wait completion, ~600 instructions); here the timer is touched about once per
// timeout period on a busy thread.
//
// Not thread-safe: the queue and its entries belong to one io_context's thread.
class TimeoutQueue : public std::enable_shared_from_this<TimeoutQueue> {
 public:
  using Clock = std::chrono::steady_clock;

  // One owner's outstanding operation. Embedded in its owner, which fixes the expiry action at
  // construction; destroying the entry takes it out of the queue, so the queue never calls
  // into a destroyed owner.
  class Entry {
   public:
    // `on_expired` runs when an operation's deadline passes (typically: cancel the socket, so
    // the operation completes with operation_aborted).
    Entry(std::shared_ptr<TimeoutQueue> queue, InlineHandler<void()> on_expired)
        : queue_(std::move(queue)), on_expired_(std::move(on_expired)) {}
    ~Entry() { queue_->Unlink(this); }
    Entry(const Entry&) = delete;
    Entry& operator=(const Entry&) = delete;

    // An operation begins: it must complete within the queue's timeout from now. An earlier
    // operation of this entry that has not ended is replaced (its deadline is dropped).
    void Begin() {
      queue_->Unlink(this);
      expired_ = false;
      queue_->Append(this);
    }
    // The operation completed. True if its deadline passed and the expiry action ran for it.
    bool End() {
      queue_->Unlink(this);
      return expired_;
    }

   private:
    friend class TimeoutQueue;

    std::shared_ptr<TimeoutQueue> queue_;
    InlineHandler<void()> on_expired_;
    Entry* prev_ = nullptr;
    Entry* next_ = nullptr;
    bool linked_ = false;
    bool expired_ = false;
    Clock::time_point deadline_{};
  };

  TimeoutQueue(boost::asio::io_context::executor_type executor, Clock::duration timeout)
      : timer_(executor), timeout_(timeout) {}

 private:
  void Append(Entry* entry);
  void Unlink(Entry* entry);
  void Wait();
  void OnTimer();

  boost::asio::basic_waitable_timer<Clock, boost::asio::wait_traits<Clock>,
                                    boost::asio::io_context::executor_type>
      timer_;
  const Clock::duration timeout_;
  Entry* head_ = nullptr;
  Entry* tail_ = nullptr;
  bool waiting_ = false;  // a wait is pending (it holds the queue alive)
};

}  // namespace fencegate::adapters
