#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace fencegate::adapters {

// Relay buffers of one network thread, reused from exchange to exchange (no locking). A fresh
// buffer per exchange costs either a zero-fill of the whole buffer (std::vector) or, for an
// uninitialised one, a malloc/free pair of a large block that glibc may give back to the
// kernel each time; both dwarf the rest of a small proxied request.
class RelayBufferPool {
 public:
  using Buffer = std::unique_ptr<char[]>;

  // buffer_bytes: the size of every buffer (at least 1). max_idle: buffers kept for reuse;
  // more are freed, so a burst of concurrent exchanges does not pin its memory.
  RelayBufferPool(std::size_t buffer_bytes, std::size_t max_idle);

  // A buffer of buffer_bytes() bytes, with unspecified contents.
  Buffer Take();
  void Give(Buffer buffer);

  std::size_t buffer_bytes() const { return buffer_bytes_; }

 private:
  const std::size_t buffer_bytes_;
  const std::size_t max_idle_;
  std::vector<Buffer> idle_;
};

}  // namespace fencegate::adapters
