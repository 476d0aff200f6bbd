#include "lockstore/fence/advance_history.h"

#include <algorithm>

namespace fencegate::lockstore {

AdvanceHistory::AdvanceHistory(std::size_t capacity) : ring_(std::max<std::size_t>(capacity, 1)) {}

void AdvanceHistory::Record(std::string_view fence_key, Token token, std::int64_t at_ms,
                            std::string_view request_id) {
  std::lock_guard lock(mu_);
  AdvanceEntry& slot = ring_[next_];
  // assign() reuses the slot's buffers: once the ring has gone round, an advance of a key no
  // longer than the one it replaces allocates nothing.
  slot.fence_key.assign(fence_key);
  slot.token = token;
  slot.at_ms = at_ms;
  slot.request_id.assign(request_id);
  next_ = (next_ + 1) % ring_.size();
  size_ = std::min(size_ + 1, ring_.size());
}

std::vector<AdvanceEntry> AdvanceHistory::ForKey(std::string_view fence_key,
                                                 std::size_t limit) const {
  std::vector<AdvanceEntry> out;
  std::lock_guard lock(mu_);
  for (std::size_t i = 1; i <= size_ && out.size() < limit; ++i) {
    const AdvanceEntry& entry = ring_[(next_ + ring_.size() - i) % ring_.size()];
    if (entry.fence_key == fence_key) out.push_back(entry);
  }
  return out;
}

}  // namespace fencegate::lockstore
