#include "lockstore/fence/rejection_queue.h"

#include <algorithm>

namespace fencegate::lockstore {

RejectionQueue::RejectionQueue(std::size_t capacity, std::size_t batch)
    : capacity_(capacity), batch_(batch) {}

bool RejectionQueue::Push(RejectionRecord& record) {
  if (size() >= capacity_) return false;
  pending_.push_back(std::move(record));
  return true;
}

std::span<RejectionRecord> RejectionQueue::NextBatch() {
  if (next_ == taken_.size()) {
    // Swapped, not copied: both vectors keep their capacity, so a steady flood allocates no
    // queue memory after the first rounds.
    taken_.clear();
    next_ = 0;
    taken_.swap(pending_);
  }
  const std::size_t count = std::min(batch_, taken_.size() - next_);
  return {taken_.data() + next_, count};
}

}  // namespace fencegate::lockstore
