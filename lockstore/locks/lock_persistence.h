#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "lockstore/locks/lock_record.h"
#include "lockstore/status.h"

namespace fencegate::lockstore {

// One change to a lock's durable state, optionally with an audit record written in the same
// atomic batch.
struct LockWrite {
  LockRecord record;
  std::optional<LockAuditRecord> audit;
  // Synced before the callback (grants, releases, forced releases). Unsynced writes (expiries)
  // ride along with the next synced write: losing one only makes a restart more conservative.
  bool sync = true;
};

// Where the lock table keeps its state. Implemented by the RocksDB fence store (same database,
// same writer thread, its own column families) and by an in-memory store for unit tests.
class LockPersistence {
 public:
  // Status, and the audit sequence assigned when the write carried an audit record.
  using WriteCallback = std::function<void(Status, std::uint64_t audit_sequence)>;

  virtual ~LockPersistence() = default;

  // Every stored lock record. Synchronous: called once at start-up.
  virtual Status LoadLocks(std::vector<LockRecord>* out) = 0;

  // One lock's record (nullopt if it was never written). Synchronous point read, no fsync: the
  // RocksDB store serves it from the memtable or block cache, like a fence read.
  virtual Status ReadLock(std::string_view name, std::optional<LockRecord>* out) = 0;

  // Applies `write` on the store's writer thread (never the caller's) and calls back from there
  // once it is durable (or failed).
  virtual void WriteLock(LockWrite write, WriteCallback callback) = 0;

  // The most recent forced releases, newest first. Synchronous: for the admin listener.
  virtual std::vector<LockAuditRecord> RecentLockAudit(std::size_t limit) = 0;
};

}  // namespace fencegate::lockstore
