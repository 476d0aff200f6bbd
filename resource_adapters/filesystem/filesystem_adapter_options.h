#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace fencegate::adapters {

class RelayBudget;

struct FilesystemAdapterOptions {
  // Directory served as a file store; created if missing. Nothing outside it is ever touched.
  std::string root;
  // Threads that do the blocking file I/O (open, write, fsync, rename) so network threads
  // never block on the disk.
  std::size_t io_threads = 2;
  // fsync the file and its directory before answering a write. Off only for benchmarks of the
  // proxy path itself.
  bool sync_writes = true;
  // Size of each read/write chunk when streaming bodies.
  std::size_t chunk_bytes = 256 * 1024;
  // The relay buffer memory all request bodies share (limits.relay_buffer_memory): a PUT
  // reserves its two chunks there first and is refused with 503 when the limit is reached.
  // Null: no limit.
  std::shared_ptr<RelayBudget> relay_budget;
};

}  // namespace fencegate::adapters
