// RocksDbFenceStore's listings for operators: a page of fences (FenceStore::ListFences) and a
// filtered page of the rejection trail (FenceStore::QueryRejections). Both are bounded iterator
// scans on the caller's thread (the admin listener).

#include <rocksdb/db.h>

#include <memory>
#include <mutex>

#include "lockstore/codec/record_codec.h"
#include "lockstore/rocksdb/rocksdb_fence_store_impl.h"
#include "lockstore/rocksdb/rocksdb_status.h"

namespace fencegate::lockstore {

Status RocksDbFenceStore::ListFences(std::string_view prefix, std::string_view after,
                                     std::size_t limit, FencePage* page) {
  *page = FencePage{};
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) return Status::Unavailable("fence store is closed");
  // The fences' memtable is a hash table for point lookups (see HasFenceWithPrefix): a scan in
  // key order reads flushed table files. A flush writes only what the memtable holds.
  if (rocksdb::Status flushed = db_->Flush(rocksdb::FlushOptions(), fences_cf_); !flushed.ok()) {
    return FromRocksDb(flushed);
  }
  rocksdb::ReadOptions scan;
  scan.total_order_seek = true;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(scan, fences_cf_));
  const rocksdb::Slice wanted(prefix.data(), prefix.size());
  if (after.empty() || after < prefix) {
    it->Seek(wanted);
  } else {
    it->Seek(rocksdb::Slice(after.data(), after.size()));
    if (it->Valid() && it->key().ToStringView() == after) it->Next();
  }
  for (; it->Valid() && it->key().starts_with(wanted); it->Next()) {
    if (page->fences.size() == limit) {
      page->more = true;
      break;
    }
    FenceListing listing{it->key().ToString(), {}};
    // A value that does not decode is listed as it is not: the point read reports it.
    if (!DecodeFenceValue(it->value().ToStringView(), &listing.record).ok()) continue;
    page->fences.push_back(std::move(listing));
  }
  return FromRocksDb(it->status());
}

RejectionPage RocksDbFenceStore::QueryRejections(const RejectionQuery& query) {
  WaitForRecordedRejections();
  RejectionPage page;
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) return page;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), rejections_cf_));
  if (query.before_sequence == 0) {
    it->SeekToLast();
  } else {
    it->SeekForPrev(EncodeSequenceKey(query.before_sequence - 1));
  }
  for (; it->Valid(); it->Prev()) {
    RejectionRecord record;
    // A record that does not decode is skipped, as in RecentRejections.
    if (!DecodeSequenceKey(it->key().ToStringView(), &record.sequence).ok()) continue;
    if (!DecodeRejectionValue(it->value().ToStringView(), &record).ok()) continue;
    if (!CollectRejection(query, record, &page)) break;
  }
  return page;
}

}  // namespace fencegate::lockstore
