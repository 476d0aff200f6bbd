#include "base/net/timeout_queue.h"

#include <boost/system/error_code.hpp>

#include "base/net/deadline_clock.h"

namespace fencegate::adapters {

void TimeoutQueue::Append(Entry* entry) {
  entry->deadline_ = DeadlineClock::Now() + timeout_;
  entry->prev_ = tail_;
  entry->next_ = nullptr;
  (tail_ != nullptr ? tail_->next_ : head_) = entry;
  tail_ = entry;
  entry->linked_ = true;
  if (!waiting_) Wait();
}

void TimeoutQueue::Unlink(Entry* entry) {
  if (!entry->linked_) return;
  (entry->prev_ != nullptr ? entry->prev_->next_ : head_) = entry->next_;
  (entry->next_ != nullptr ? entry->next_->prev_ : tail_) = entry->prev_;
  entry->prev_ = entry->next_ = nullptr;
  entry->linked_ = false;
}

void TimeoutQueue::Wait() {
  waiting_ = true;
  // The head may end before this wait expires; the wait then finds a later head (or none) and
  // waits again, rather than being re-armed on every unlink.
  timer_.expires_at(head_->deadline_);
  timer_.async_wait([self = shared_from_this()](boost::system::error_code) { self->OnTimer(); });
}

void TimeoutQueue::OnTimer() {
  waiting_ = false;
  const Clock::time_point now = Clock::now();
  while (head_ != nullptr && head_->deadline_ <= now) {
    Entry* due = head_;
    Unlink(due);
    due->expired_ = true;
    // May begin or end operations of any entry, this one included: the loop re-reads head_.
    due->on_expired_();
  }
  if (head_ != nullptr) Wait();
}

}  // namespace fencegate::adapters
