#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "resource_adapters/adapter.h"

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

// Serves GET/HEAD/PUT/DELETE of files under `root`. Writes go to a temp file that is fsynced and
// renamed over the target, then the directory is fsynced. The token that wrote a file is kept
// with it and returned in the Fencing-Token response header. Returns nullptr and sets `error`
// when `root` cannot be created or opened.
std::unique_ptr<AdapterFactory> MakeFilesystemAdapterFactory(FilesystemAdapterOptions options,
                                                             std::string* error);

}  // namespace fencegate::adapters
