#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "lockstore/fence/fence_store.h"
#include "lockstore/log_sink.h"
#include "lockstore/rocksdb/store_identity.h"
#include "lockstore/status.h"

namespace fencegate::lockstore {

struct RocksDbFenceStoreOptions {
  // Directory of the database. Its identity file is <path>.identity (store_identity.h).
  std::string path;
  // When a store that does not exist yet may be created.
  StoreCreation creation = StoreCreation::kIfAbsent;
  // For `fencegate store floor` only, which raises fences above whatever was lost: open a store
  // whose write-ahead log is damaged (replaying it up to the damage, RocksDB's point-in-time
  // recovery) or missing, instead of refusing it.
  bool salvage = false;
  // Size of RocksDB's block cache, shared by all column families. Data blocks and the index
  // and filter blocks are all charged to it; index and filter blocks stay pinned (about 1/200
  // of the store's size, 154 KB per million fence keys), data blocks are evicted, so it bounds
  // the store's read memory; memtables add up to about 42 MiB while writes are buffered. The
  // default holds every block of a million fence keys (~30 MB uncompressed).
  std::size_t block_cache_bytes = 32u << 20;
  // Upper bound on advances folded into one synced write batch (group commit).
  std::size_t max_batch = 4096;
  // Group commit under concurrency: when the previous synced write carried two or more
  // advances, the writer waits for as many to be queued before the next one (now and then for
  // half as many again, to find out whether more clients would join), but at most this long
  // and at most as long as the previous synced write took (twice that for the probes). More
  // advances then share one fsync, and the store spends less CPU per advance: that CPU is
  // taken from the network threads. A lone writer never waits (its previous round carried one
  // advance). Zero: every round writes what is queued at once.
  std::chrono::microseconds group_commit_wait{1000};
  // How many refused writes the audit trail keeps (older ones are deleted).
  std::size_t rejection_retention = 10000;
  // How many refused writes' audit records may wait to be written. They wait apart from the
  // advances, and a record refused while this many wait is dropped (counted in
  // rejections_dropped): a flood of refused writes costs bounded memory and never delays an
  // advance by more than one batch of rejection_batch records.
  std::size_t rejection_queue = 4096;
  std::size_t rejection_batch = 256;
  // Where the store's health changes (a failed write, the recovery) and RocksDB's own warnings
  // and errors go, one line per call, from store threads. Empty: dropped.
  LogSink log;
  // After a failed write (disk full, read-only, I/O error) the store is not ready and retries
  // DB::Resume() this often, and before every write, until the disk takes writes again; it
  // then recovers without a restart.
  std::chrono::milliseconds resume_retry = std::chrono::milliseconds(200);
};

// Opens (or creates, see `creation`) the RocksDB-backed fence store. A store that is missing
// where its identity file says one was, swapped for another, or whose write-ahead log is missing
// or damaged before its last record, is refused (NotFound or Corruption, the message says how to
// recover); a torn last record (kill -9 during a write nobody was told had succeeded) is not.
// Advances are group-committed by one writer thread with WriteOptions::sync, so an acknowledged
// advance survives kill -9 and power loss.
Status OpenRocksDbFenceStore(const RocksDbFenceStoreOptions& options,
                             std::unique_ptr<FenceStore>* store);

}  // namespace fencegate::lockstore
