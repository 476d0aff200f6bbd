#pragma once

#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "lockstore/locks/lock_persistence.h"

namespace fencegate::lockstore {

// Non-durable lock persistence for unit tests. Outlives the tables built on it, so a second
// table over the same instance sees what a restart would. Writes apply and call back inline
// unless deferred, in which case they wait for RunPending() so tests control the interleaving.
class MemoryLockPersistence final : public LockPersistence {
 public:
  Status LoadLocks(std::vector<LockRecord>* out) override;
  Status ReadLock(std::string_view name, std::optional<LockRecord>* out) override;
  void WriteLock(LockWrite write, WriteCallback callback) override;
  std::vector<LockAuditRecord> RecentLockAudit(std::size_t limit) override;

  void SetDeferred(bool deferred);
  std::size_t RunPending();            // applies queued writes in order; returns how many
  void FailNextWrites(Status status);  // subsequent writes fail with `status` (Ok: stop failing)
  std::size_t synced_writes() const;

 private:
  struct Pending {
    LockWrite write;
    WriteCallback callback;
  };
  void Apply(Pending pending);

  mutable std::mutex mu_;
  std::map<std::string, LockRecord> records_;
  std::vector<LockAuditRecord> audit_;
  std::deque<Pending> pending_;
  bool deferred_ = false;
  Status fail_with_;
  std::size_t synced_writes_ = 0;
};

}  // namespace fencegate::lockstore
