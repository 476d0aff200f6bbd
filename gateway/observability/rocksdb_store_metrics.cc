#include "gateway/observability/rocksdb_store_metrics.h"

#include "gateway/observability/store_counters.h"

namespace fencegate::gateway {

RocksDbStoreMetrics::RocksDbStoreMetrics(prometheus::Registry& registry,
                                         const lockstore::RocksDbFenceStore& store)
    : store_(store),
      advances_(MakeStoreCounter(registry, "fencegate_store_advances_total",
                                 "Fence advances handed to the embedded store.")),
      sync_writes_(
          MakeStoreCounter(registry, "fencegate_store_sync_writes_total",
                           "Synced write batches (one fsync each) that carried advances.")),
      failed_writes_(MakeStoreCounter(registry, "fencegate_store_failed_writes_total",
                                      "Synced write batches of advances that the disk refused.")),
      rejections_written_(MakeStoreCounter(registry, "fencegate_store_rejections_written_total",
                                           "Audit records of refused writes written.")),
      rejections_dropped_(MakeStoreCounter(
          registry, "fencegate_store_rejections_dropped_total",
          "Audit records of refused writes not written: store.rejection_queue records were "
          "already waiting, RocksDB was throttling writes, or the write failed.")) {}

void RocksDbStoreMetrics::Refresh() {
  std::lock_guard lock(mu_);
  const lockstore::RocksDbFenceStore::Stats now = store_.stats();
  AddStoreDelta(advances_, now.advances, last_.advances);
  AddStoreDelta(sync_writes_, now.sync_writes, last_.sync_writes);
  AddStoreDelta(failed_writes_, now.failed_writes, last_.failed_writes);
  AddStoreDelta(rejections_written_, now.rejections_written, last_.rejections_written);
  AddStoreDelta(rejections_dropped_, now.rejections_dropped, last_.rejections_dropped);
  last_ = now;
}

}  // namespace fencegate::gateway
