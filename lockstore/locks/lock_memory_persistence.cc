#include "lockstore/locks/lock_memory_persistence.h"

namespace fencegate::lockstore {

Status MemoryLockPersistence::LoadLocks(std::vector<LockRecord>* out) {
  std::lock_guard lock(mu_);
  out->clear();
  for (const auto& [name, record] : records_) out->push_back(record);
  return Status::Ok();
}

Status MemoryLockPersistence::ReadLock(std::string_view name, std::optional<LockRecord>* out) {
  std::lock_guard lock(mu_);
  auto it = records_.find(std::string(name));
  *out = it == records_.end() ? std::nullopt : std::optional<LockRecord>(it->second);
  return Status::Ok();
}

void MemoryLockPersistence::WriteLock(LockWrite write, WriteCallback callback) {
  {
    std::lock_guard lock(mu_);
    if (deferred_) {
      pending_.push_back({std::move(write), std::move(callback)});
      return;
    }
  }
  Apply({std::move(write), std::move(callback)});
}

void MemoryLockPersistence::Apply(Pending pending) {
  Status status;
  std::uint64_t sequence = 0;
  {
    std::lock_guard lock(mu_);
    status = fail_with_;
    if (status.ok()) {
      records_[pending.write.record.name] = pending.write.record;
      if (pending.write.audit) {
        pending.write.audit->sequence = sequence = audit_.size() + 1;
        audit_.push_back(*pending.write.audit);
      }
      if (pending.write.sync) ++synced_writes_;
    }
  }
  if (pending.callback) pending.callback(status, sequence);
}

std::vector<LockAuditRecord> MemoryLockPersistence::RecentLockAudit(std::size_t limit) {
  std::lock_guard lock(mu_);
  std::vector<LockAuditRecord> out;
  for (auto it = audit_.rbegin(); it != audit_.rend() && out.size() < limit; ++it) {
    out.push_back(*it);
  }
  return out;
}

void MemoryLockPersistence::SetDeferred(bool deferred) {
  std::lock_guard lock(mu_);
  deferred_ = deferred;
}

std::size_t MemoryLockPersistence::RunPending() {
  std::size_t count = 0;
  for (;;) {
    Pending pending;
    {
      std::lock_guard lock(mu_);
      if (pending_.empty()) return count;
      pending = std::move(pending_.front());
      pending_.pop_front();
    }
    Apply(std::move(pending));
    ++count;
  }
}

void MemoryLockPersistence::FailNextWrites(Status status) {
  std::lock_guard lock(mu_);
  fail_with_ = std::move(status);
}

std::size_t MemoryLockPersistence::synced_writes() const {
  std::lock_guard lock(mu_);
  return synced_writes_;
}

}  // namespace fencegate::lockstore
