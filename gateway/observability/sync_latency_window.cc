#include "gateway/observability/sync_latency_window.h"

#include <algorithm>

namespace fencegate::gateway {

SyncLatencyWindow::SyncLatencyWindow(std::span<const double> bounds)
    : bounds_(bounds.begin(), bounds.end()),
      ring_(kSeconds + 1, std::vector<std::uint64_t>(bounds.size() + 1, 0)) {}

void SyncLatencyWindow::Sample(std::span<const std::uint64_t> cumulative_counts) {
  std::vector<std::uint64_t>& slot = ring_[next_];
  const std::size_t n = std::min(slot.size(), cumulative_counts.size());
  std::copy_n(cumulative_counts.begin(), n, slot.begin());
  next_ = (next_ + 1) % ring_.size();
  size_ = std::min(size_ + 1, ring_.size());
}

std::optional<double> SyncLatencyWindow::P99Seconds() const {
  if (size_ < 2) return std::nullopt;
  const std::vector<std::uint64_t>& newest = ring_[(next_ + ring_.size() - 1) % ring_.size()];
  const std::vector<std::uint64_t>& oldest =
      ring_[size_ == ring_.size() ? next_ : 0];  // the slot written longest ago
  std::vector<std::uint64_t> minute(newest.size());
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < newest.size(); ++i) {
    minute[i] = newest[i] - oldest[i];
    total += minute[i];
  }
  if (total == 0) return std::nullopt;
  // The smallest bucket whose running count reaches 99% of the syncs (rounded up).
  const std::uint64_t wanted = (total * 99 + 99) / 100;
  std::uint64_t running = 0;
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    running += minute[i];
    if (running >= wanted) return bounds_[i];
  }
  return std::nullopt;
}

}  // namespace fencegate::gateway
