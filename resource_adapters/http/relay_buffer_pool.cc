#include "resource_adapters/http/relay_buffer_pool.h"

#include <algorithm>
#include <utility>

namespace fencegate::adapters {

RelayBufferPool::RelayBufferPool(std::size_t buffer_bytes, std::size_t max_idle)
    : buffer_bytes_(std::max<std::size_t>(buffer_bytes, 1)), max_idle_(max_idle) {}

RelayBufferPool::Buffer RelayBufferPool::Take() {
  ++in_use_;
  window_peak_ = std::max(window_peak_, in_use_);
  if (++window_takes_ == kWindowTakes) {
    window_takes_ = 0;
    previous_peak_ = window_peak_;
    window_peak_ = in_use_;
  }
  if (idle_.empty()) return std::make_unique_for_overwrite<char[]>(buffer_bytes_);
  Buffer buffer = std::move(idle_.back());
  idle_.pop_back();
  return buffer;
}

void RelayBufferPool::Give(Buffer buffer) {
  if (!buffer) return;
  --in_use_;
  idle_.push_back(std::move(buffer));
  // Also frees those kept for a peak that has since left both windows.
  const std::size_t recent_peak = std::max(window_peak_, previous_peak_);
  while (!idle_.empty() && (idle_.size() > max_idle_ || idle_.size() + in_use_ > recent_peak)) {
    idle_.pop_back();
  }
}

}  // namespace fencegate::adapters
