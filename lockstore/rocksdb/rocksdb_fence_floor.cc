// RocksDbFenceStore's floors: `fencegate store floor` raises the fences of a store that may have
// lost some (a restored backup, a damaged log) above every token handed out since.

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <memory>
#include <mutex>

#include "lockstore/codec/record_codec.h"
#include "lockstore/rocksdb/rocksdb_fence_recovery.h"
#include "lockstore/rocksdb/rocksdb_fence_store_impl.h"

namespace fencegate::lockstore {
namespace {

// Fences rewritten per synced batch: bounds the batch's memory on a store of millions of keys.
constexpr std::size_t kFloorBatchKeys = 10000;

rocksdb::Slice ToSlice(const EncodedFenceValue& value) { return {value.data(), value.size()}; }

Status WriteSynced(rocksdb::DB& db, rocksdb::WriteBatch& batch) {
  rocksdb::WriteOptions sync;
  sync.sync = true;
  const rocksdb::Status s = db.Write(sync, &batch);
  batch.Clear();
  return s.ok() ? Status::Ok() : Status::IOError(s.ToString());
}

}  // namespace

std::optional<FenceRecord> RocksDbFenceStore::FloorFor(std::string_view key) const {
  if (floors_.empty()) return std::nullopt;
  return HighestFloor(floors_, key);
}

Token RocksDbFenceStore::LockTokenFloor() const {
  const std::optional<FenceRecord> floor = FloorFor("");
  return floor ? floor->highest : 0;
}

Status RocksDbFenceStore::RaiseFloor(std::string_view prefix, Token floor, std::int64_t now_ms,
                                     FloorResult* result) {
  if (Status drained = Flush(); !drained.ok()) return drained;
  std::unique_lock lock(db_mu_);
  if (db_ == nullptr) return Status::Unavailable("fence store is closed");
  const EncodedFenceValue value = EncodeFenceValue({floor, now_ms});
  rocksdb::WriteBatch batch;

  // The floor record first: once it is durable, keys the store has no record of (never written,
  // or lost) stand at the floor, whatever happens to the rewrite below. A floor never lowers an
  // earlier one of the same prefix.
  const std::optional<FenceRecord> earlier = [&]() -> std::optional<FenceRecord> {
    for (const FenceFloor& existing : floors_) {
      if (existing.prefix == prefix) return existing.record;
    }
    return std::nullopt;
  }();
  if (!earlier || earlier->highest < floor) {
    batch.Put(default_cf_, FloorKey(prefix), ToSlice(value));
    if (Status written = WriteSynced(*db_, batch); !written.ok()) return written;
    std::erase_if(floors_, [&](const FenceFloor& existing) { return existing.prefix == prefix; });
    floors_.push_back({std::string(prefix), {floor, now_ms}});
  }

  // Then every stored fence under the prefix below the floor. The fences' memtable is a hash
  // table built for point lookups (and updated in place); flushed, the scan reads table files.
  rocksdb::Status s = db_->Flush(rocksdb::FlushOptions(), fences_cf_);
  if (!s.ok()) return Status::IOError(s.ToString());
  rocksdb::ReadOptions scan;
  scan.total_order_seek = true;  // the family's prefix extractor takes whole keys
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(scan, fences_cf_));
  for (it->Seek(rocksdb::Slice(prefix.data(), prefix.size()));
       it->Valid() && it->key().starts_with(rocksdb::Slice(prefix.data(), prefix.size()));
       it->Next()) {
    ++result->examined;
    FenceRecord current;
    if (Status decoded = DecodeFenceValue(it->value().ToStringView(), &current); !decoded.ok()) {
      return Status::Corruption("fence \"" + it->key().ToString() + "\": " + decoded.ToString());
    }
    if (current.highest >= floor) continue;
    batch.Put(fences_cf_, it->key(), ToSlice(value));
    ++result->raised;
    if (batch.Count() >= kFloorBatchKeys) {
      if (Status written = WriteSynced(*db_, batch); !written.ok()) return written;
    }
  }
  if (!it->status().ok()) return Status::IOError(it->status().ToString());
  known_fences_.clear();
  return batch.Count() > 0 ? WriteSynced(*db_, batch) : Status::Ok();
}

}  // namespace fencegate::lockstore
