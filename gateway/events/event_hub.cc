#include "gateway/events/event_hub.h"

#include <algorithm>
#include <utility>

namespace fencegate::gateway {

EventHub::EventHub(std::size_t capacity) : ring_(std::max<std::size_t>(capacity, 1)) {}

void EventHub::PublishRejection(lockstore::RejectionRecord record) { Publish(std::move(record)); }

void EventHub::PublishLockGrant(LockGrantEvent grant) { Publish(std::move(grant)); }

void EventHub::Publish(std::variant<lockstore::RejectionRecord, LockGrantEvent> payload) {
  // The displaced event is destroyed outside the lock, so its strings' frees do not lengthen
  // the critical section other publishers wait on.
  std::variant<lockstore::RejectionRecord, LockGrantEvent> displaced;
  {
    std::lock_guard lock(mutex_);
    HubEvent& slot = ring_[(last_id_ + 1) % ring_.size()];
    displaced = std::exchange(slot.payload, std::move(payload));
    slot.id = ++last_id_;
  }
}

std::vector<HubEvent> EventHub::After(std::uint64_t after, std::size_t max) const {
  std::vector<HubEvent> out;
  std::lock_guard lock(mutex_);
  if (after >= last_id_ || max == 0) return out;
  const std::uint64_t oldest = last_id_ >= ring_.size() ? last_id_ - ring_.size() + 1 : 1;
  const std::uint64_t first = std::max(after + 1, oldest);
  const std::uint64_t last = std::min(last_id_, first + max - 1);
  out.reserve(last - first + 1);
  for (std::uint64_t id = first; id <= last; ++id) out.push_back(ring_[id % ring_.size()]);
  return out;
}

std::uint64_t EventHub::LastId() const {
  std::lock_guard lock(mutex_);
  return last_id_;
}

}  // namespace fencegate::gateway
