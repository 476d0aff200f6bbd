// RocksDbFenceStore's LockPersistence: the lock table's records in the fence store's database,
// written by the same writer thread (see rocksdb_fence_store_impl.h).

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>

#include "lockstore/codec/lock_record_codec.h"
#include "lockstore/codec/record_codec.h"
#include "lockstore/rocksdb/rocksdb_fence_store_impl.h"
#include "lockstore/rocksdb/rocksdb_status.h"

namespace fencegate::lockstore {
Status RocksDbFenceStore::LoadLocks(std::vector<LockRecord>* out) {
  out->clear();
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) return Status::Unavailable("fence store is closed");
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), locks_cf_));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    LockRecord record;
    // Unlike the advisory rejection trail, a lock record that does not decode is an error: its
    // last token must not be forgotten, or a token could be issued twice.
    Status decoded = DecodeLockValue(it->value().ToStringView(), &record);
    if (!decoded.ok())
      return Status::Corruption("lock " + it->key().ToString() + ": " + decoded.message());
    record.name = it->key().ToString();
    record.last_token = std::max(record.last_token, LockTokenFloor());
    out->push_back(std::move(record));
  }
  return FromRocksDb(it->status());
}

Status RocksDbFenceStore::ReadLock(std::string_view name, std::optional<LockRecord>* out) {
  out->reset();
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) return Status::Unavailable("fence store is closed");
  rocksdb::PinnableSlice value;
  const rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), locks_cf_, rocksdb::Slice(name.data(), name.size()), &value);
  LockRecord record;
  if (s.IsNotFound()) {
    // A lock never taken starts above the floor, like a fence never written.
    if (LockTokenFloor() == 0) return Status::Ok();
  } else if (!s.ok()) {
    return FromRocksDb(s);
  } else if (Status decoded = DecodeLockValue(value.ToStringView(), &record); !decoded.ok()) {
    return decoded;
  }
  record.name = std::string(name);
  record.last_token = std::max(record.last_token, LockTokenFloor());
  *out = std::move(record);
  return Status::Ok();
}

void RocksDbFenceStore::WriteLock(LockWrite write, WriteCallback callback) {
  WriteOp op = LockOp{std::move(write), std::move(callback)};
  if (!Enqueue(op)) std::get<LockOp>(op).callback(Status::Unavailable("fence store is closed"), 0);
}

std::vector<LockAuditRecord> RocksDbFenceStore::RecentLockAudit(std::size_t limit) {
  std::vector<LockAuditRecord> out;
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) return out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), lock_audit_cf_));
  for (it->SeekToLast(); it->Valid() && out.size() < limit; it->Prev()) {
    LockAuditRecord record;
    if (!DecodeSequenceKey(it->key().ToStringView(), &record.sequence).ok()) continue;
    if (!DecodeLockAuditValue(it->value().ToStringView(), &record).ok()) continue;
    out.push_back(std::move(record));
  }
  return out;
}

void RocksDbFenceStore::CommitLocks(std::vector<LockOp*>& locks) {
  rocksdb::WriteBatch batch;
  bool sync = false;
  std::vector<std::uint64_t> sequences(locks.size(), 0);
  for (std::size_t i = 0; i < locks.size(); ++i) {
    LockWrite& write = locks[i]->write;
    batch.Put(locks_cf_, write.record.name, EncodeLockValue(write.record));
    if (write.audit) {
      sequences[i] = next_audit_sequence_++;
      batch.Put(lock_audit_cf_, EncodeSequenceKey(sequences[i]),
                EncodeLockAuditValue(*write.audit));
    }
    sync = sync || write.sync;
  }
  rocksdb::WriteOptions options;
  options.sync = sync;
  const auto write_start = std::chrono::steady_clock::now();
  const rocksdb::Status s = Write(options, &batch);
  if (sync) {
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - write_start;
    std::lock_guard lock(mu_);
    ++stats_.sync_writes;
    if (!s.ok()) ++stats_.failed_writes;
    stats_.sync_seconds.Observe(Stats::kSyncSecondsBounds, took.count());
  }
  const Status status = FromRocksDb(s);
  for (std::size_t i = 0; i < locks.size(); ++i) {
    if (locks[i]->callback) locks[i]->callback(status, status.ok() ? sequences[i] : 0);
  }
}

}  // namespace fencegate::lockstore
