// RocksDbFenceStore's route bindings (FenceStore::ReadRouteBindings): one record per route in the
// metadata family, "fencegate.route/<route name>" -> binding text.

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <memory>
#include <mutex>

#include "lockstore/rocksdb/rocksdb_fence_store_impl.h"
#include "lockstore/rocksdb/rocksdb_status.h"

namespace fencegate::lockstore {
namespace {

constexpr std::string_view kRouteBindingPrefix = "fencegate.route/";

}  // namespace

Status RocksDbFenceStore::ReadRouteBindings(std::map<std::string, std::string>* out) {
  out->clear();
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) return Status::Unavailable("fence store is closed");
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), default_cf_));
  for (it->Seek(kRouteBindingPrefix); it->Valid() && it->key().starts_with(kRouteBindingPrefix);
       it->Next()) {
    (*out)[std::string(it->key().ToStringView().substr(kRouteBindingPrefix.size()))] =
        it->value().ToString();
  }
  return FromRocksDb(it->status());
}

Status RocksDbFenceStore::WriteRouteBindings(const std::map<std::string, std::string>& bindings) {
  if (bindings.empty()) return Status::Ok();
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) return Status::Unavailable("fence store is closed");
  rocksdb::WriteBatch batch;
  for (const auto& [route, binding] : bindings) {
    batch.Put(default_cf_, std::string(kRouteBindingPrefix) + route, binding);
  }
  rocksdb::WriteOptions sync;
  sync.sync = true;
  return FromRocksDb(db_->Write(sync, &batch));
}

Status RocksDbFenceStore::HasFenceWithPrefix(std::string_view prefix, bool* found) {
  *found = false;
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) return Status::Unavailable("fence store is closed");
  // A floor over (or under) the prefix is history too: it stands for fences the store lost.
  for (const FenceFloor& floor : floors_) {
    if (prefix.starts_with(floor.prefix) || std::string_view(floor.prefix).starts_with(prefix)) {
      *found = true;
      return Status::Ok();
    }
  }
  // The fences' memtable is a hash table for point lookups: a scan reads flushed table files,
  // in total order (the family's prefix extractor takes whole keys). Rare: a changed route.
  if (rocksdb::Status flushed = db_->Flush(rocksdb::FlushOptions(), fences_cf_); !flushed.ok()) {
    return FromRocksDb(flushed);
  }
  rocksdb::ReadOptions scan;
  scan.total_order_seek = true;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(scan, fences_cf_));
  it->Seek(rocksdb::Slice(prefix.data(), prefix.size()));
  *found = it->Valid() && it->key().starts_with(rocksdb::Slice(prefix.data(), prefix.size()));
  return FromRocksDb(it->status());
}

}  // namespace fencegate::lockstore
