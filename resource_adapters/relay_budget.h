#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "resource_adapters/adapter.h"

namespace fencegate::adapters {

// The relay buffer memory of all network threads together (limits.relay_buffer_memory). A
// request body reserves its buffers' size here before it takes any buffer, and gives the
// reservation back when its exchange ends; the buffers themselves are taken only while there
// are bytes to put in them. So however many bodies are in progress, slow or not, their relay
// buffers never exceed the limit. A body that finds the limit reached is refused at once with
// 503 rather than queued (README "Limits": a queue would let the bodies that hold the memory
// decide how long everyone else waits). One atomic operation per reservation and per release,
// no lock; shared by every adapter instance of every thread.
class RelayBudget {
 public:
  explicit RelayBudget(std::uint64_t limit_bytes) : limit_(limit_bytes) {}
  RelayBudget(const RelayBudget&) = delete;
  RelayBudget& operator=(const RelayBudget&) = delete;

  // Reserves `bytes` if the total stays within the limit; counts a refusal otherwise when
  // `count_refusal` (a body refused, not an optional second buffer).
  bool TryReserve(std::uint64_t bytes, bool count_refusal = true) {
    std::uint64_t reserved = reserved_.load(std::memory_order_relaxed);
    do {
      if (bytes > limit_ - std::min(reserved, limit_)) {
        if (count_refusal) refusals_.fetch_add(1, std::memory_order_relaxed);
        return false;
      }
    } while (
        !reserved_.compare_exchange_weak(reserved, reserved + bytes, std::memory_order_relaxed));
    return true;
  }

  void Release(std::uint64_t bytes) { reserved_.fetch_sub(bytes, std::memory_order_relaxed); }

  std::uint64_t limit() const { return limit_; }
  std::uint64_t reserved() const { return reserved_.load(std::memory_order_relaxed); }
  std::uint64_t refusals() const { return refusals_.load(std::memory_order_relaxed); }

 private:
  const std::uint64_t limit_;
  std::atomic<std::uint64_t> reserved_{0};
  std::atomic<std::uint64_t> refusals_{0};
};

// The answer to a body refused by RelayBudget::TryReserve.
inline Problem RelayMemoryExhaustedProblem() {
  return Problem{
      .status = 503,
      .type = "relay-memory-exhausted",
      .title = "Gateway busy",
      .detail = "request bodies in progress hold all of limits.relay_buffer_memory; retry",
      .retry_after = true};
}

}  // namespace fencegate::adapters
