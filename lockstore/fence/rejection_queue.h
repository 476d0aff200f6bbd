#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "lockstore/fence/fence_record.h"

namespace fencegate::lockstore {

// Audit records of refused writes waiting for the RocksDB store's writer thread, kept apart from
// the advances so that a flood of refusals never queues in front of one. Bounded: a record
// pushed while `capacity` records wait is refused (the store counts it as dropped), so a flood
// costs at most `capacity` records of memory. The writer takes them in batches of at most
// `batch`, one batch per round of advances, so a round waits for at most one batch.
//
// Not synchronised: Push(), size() and the writer's calls are made with the store's queue mutex
// held. The batch NextBatch() returns is only read by the writer, outside the mutex: pushes go to
// a different vector.
class RejectionQueue {
 public:
  RejectionQueue(std::size_t capacity, std::size_t batch);

  // Moves `record` in, or leaves it and returns false when the queue is full.
  [[nodiscard]] bool Push(RejectionRecord& record);
  std::size_t size() const { return pending_.size() + (taken_.size() - next_); }
  bool empty() const { return size() == 0; }

  // Writer thread: the oldest waiting records, at most `batch`; valid until Done().
  std::span<RejectionRecord> NextBatch();
  // Writer thread: the records NextBatch() returned are written (or lost to a failed write).
  void Done(std::size_t count) { next_ += count; }

 private:
  const std::size_t capacity_;
  const std::size_t batch_;
  std::vector<RejectionRecord> pending_;  // pushed since the writer last took the queue over
  std::vector<RejectionRecord> taken_;    // taken over by the writer; written up to next_
  std::size_t next_ = 0;
};

}  // namespace fencegate::lockstore
