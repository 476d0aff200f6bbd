#include "resource_adapters/http/relay_buffer_pool.h"

#include <algorithm>
#include <utility>

namespace fencegate::adapters {

RelayBufferPool::RelayBufferPool(std::size_t buffer_bytes, std::size_t max_idle)
    : buffer_bytes_(std::max<std::size_t>(buffer_bytes, 1)), max_idle_(max_idle) {}

RelayBufferPool::Buffer RelayBufferPool::Take() {
  if (idle_.empty()) return std::make_unique_for_overwrite<char[]>(buffer_bytes_);
  Buffer buffer = std::move(idle_.back());
  idle_.pop_back();
  return buffer;
}

void RelayBufferPool::Give(Buffer buffer) {
  if (buffer && idle_.size() < max_idle_) idle_.push_back(std::move(buffer));
}

}  // namespace fencegate::adapters
