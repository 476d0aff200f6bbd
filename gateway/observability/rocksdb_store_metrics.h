#pragma once

#include <mutex>
#include <optional>

#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "gateway/observability/sync_latency_window.h"
#include "lockstore/rocksdb/rocksdb_fence_store_impl.h"

namespace fencegate::gateway {

// The embedded store's counters as Prometheus counters, brought up to date when /metrics is read:
//   fencegate_store_advances_total            fence advances handed to the store
//   fencegate_store_sync_writes_total         synced write batches (one fsync each) for them;
//                                             advances / sync writes is the group-commit factor
//   fencegate_store_failed_writes_total       synced write batches the disk refused
//   fencegate_store_rejections_written_total  audit records of refused writes written
//   fencegate_store_rejections_dropped_total  audit records of refused writes not written: the
//                                             rejection queue was full, RocksDB was throttling
//                                             writes, or the write failed
//   fencegate_store_sync_duration_seconds     histogram: how long each synced write (fsync) of
//                                             advances or lock records took
//   fencegate_store_group_commit_advances     histogram: advances that shared one synced write
class RocksDbStoreMetrics {
 public:
  RocksDbStoreMetrics(prometheus::Registry& registry, const lockstore::RocksDbFenceStore& store);

  // Called by the admin thread before it renders the exposition.
  void Refresh();

  // Admin thread, once a second: the store's sync latency counts into the one-minute window
  // whose 99th percentile GET /admin/summary shows (SyncP99Seconds).
  void SampleSyncWindow();
  std::optional<double> SyncP99Seconds() const { return sync_window_.P99Seconds(); }

 private:
  const lockstore::RocksDbFenceStore& store_;
  std::mutex mu_;
  lockstore::RocksDbFenceStore::Stats last_;
  prometheus::Counter* advances_;
  prometheus::Counter* sync_writes_;
  prometheus::Counter* failed_writes_;
  prometheus::Counter* rejections_written_;
  prometheus::Counter* rejections_dropped_;
  prometheus::Histogram* sync_seconds_;
  prometheus::Histogram* group_commit_advances_;
  SyncLatencyWindow sync_window_{lockstore::RocksDbFenceStore::Stats::kSyncSecondsBounds};
};

}  // namespace fencegate::gateway
