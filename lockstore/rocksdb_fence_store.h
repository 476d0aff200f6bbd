#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "lockstore/fence_store.h"
#include "lockstore/status.h"

namespace fencegate::lockstore {

struct RocksDbFenceStoreOptions {
  // Directory of the database; created if missing.
  std::string path;
  // Size of RocksDB's block cache for fence records. Bounds read-side memory regardless of
  // how many keys are stored.
  std::size_t block_cache_bytes = 32u << 20;
  // Upper bound on advances folded into one synced write batch (group commit).
  std::size_t max_batch = 4096;
  // How many refused writes the audit trail keeps (older ones are deleted).
  std::size_t rejection_retention = 10000;
};

// Opens (or creates) the RocksDB-backed fence store. Advances are group-committed by one writer
// thread with WriteOptions::sync, so an acknowledged advance survives kill -9 and power loss.
Status OpenRocksDbFenceStore(const RocksDbFenceStoreOptions& options,
                             std::unique_ptr<FenceStore>* store);

}  // namespace fencegate::lockstore
