#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "lockstore/fence/fence_record.h"

namespace fencegate::gateway {

// How many events GET /admin/events can replay after a reconnect (Last-Event-ID).
inline constexpr std::size_t kEventRingCapacity = 1024;

// A lock granted by the built-in lock service (never its owner token: only the owner id that
// /admin/locks shows too).
struct LockGrantEvent {
  std::string lock;
  std::string owner_id;
  std::uint64_t fencing_token = 0;
  std::int64_t at_ms = 0;  // Unix milliseconds
};

// One published event and its id (increasing from 1, never reused while the process runs).
struct HubEvent {
  std::uint64_t id = 0;
  std::variant<lockstore::RejectionRecord, LockGrantEvent> payload;
};

// The last `capacity` rejections and lock grants, for GET /admin/events. Network threads publish
// (a short critical section: one move into a preallocated slot, no I/O and nothing that waits on
// a reader); the admin thread copies out what came after the id a stream last sent. A reader
// that falls more than `capacity` events behind misses the overwritten ones, so a slow reader
// costs the publishers nothing.
class EventHub {
 public:
  explicit EventHub(std::size_t capacity);

  void PublishRejection(lockstore::RejectionRecord record);
  void PublishLockGrant(LockGrantEvent grant);

  // The oldest `max` events with an id above `after` still in the ring, oldest first.
  std::vector<HubEvent> After(std::uint64_t after, std::size_t max) const;
  // The id of the newest event (0: none yet).
  std::uint64_t LastId() const;

 private:
  void Publish(std::variant<lockstore::RejectionRecord, LockGrantEvent> payload);

  mutable std::mutex mutex_;
  std::vector<HubEvent> ring_;  // slot id % capacity; ids 0 mean empty
  std::uint64_t last_id_ = 0;
};

}  // namespace fencegate::gateway
