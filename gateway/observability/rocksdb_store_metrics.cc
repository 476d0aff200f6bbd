#include "gateway/observability/rocksdb_store_metrics.h"

#include <array>
#include <vector>

#include "gateway/observability/store_counters.h"

namespace fencegate::gateway {
namespace {

template <std::size_t N>
prometheus::Histogram* MakeStoreHistogram(prometheus::Registry& registry, const char* name,
                                          const char* help, const std::array<double, N>& bounds) {
  return &prometheus::BuildHistogram().Name(name).Help(help).Register(registry).Add(
      {}, prometheus::Histogram::BucketBoundaries(bounds.begin(), bounds.end()));
}

// Adds what the store observed since the previous read.
template <std::size_t N>
void AddStoreObservations(prometheus::Histogram* histogram, const lockstore::BucketCounts<N>& now,
                          const lockstore::BucketCounts<N>& before) {
  std::vector<double> increments(N + 1);
  bool any = false;
  for (std::size_t i = 0; i <= N; ++i) {
    increments[i] = static_cast<double>(now.counts[i] - before.counts[i]);
    any = any || now.counts[i] != before.counts[i];
  }
  if (any) histogram->ObserveMultiple(increments, now.sum - before.sum);
}

}  // namespace

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
          "already waiting, RocksDB was throttling writes, or the write failed.")),
      sync_seconds_(MakeStoreHistogram(
          registry, "fencegate_store_sync_duration_seconds",
          "Time each synced write (fsync) of fence advances or lock records took.",
          lockstore::RocksDbFenceStore::Stats::kSyncSecondsBounds)),
      group_commit_advances_(
          MakeStoreHistogram(registry, "fencegate_store_group_commit_advances",
                             "Fence advances that shared one synced write (group commit).",
                             lockstore::RocksDbFenceStore::Stats::kGroupCommitBounds)) {}

void RocksDbStoreMetrics::Refresh() {
  std::lock_guard lock(mu_);
  const lockstore::RocksDbFenceStore::Stats now = store_.stats();
  AddStoreDelta(advances_, now.advances, last_.advances);
  AddStoreDelta(sync_writes_, now.sync_writes, last_.sync_writes);
  AddStoreDelta(failed_writes_, now.failed_writes, last_.failed_writes);
  AddStoreDelta(rejections_written_, now.rejections_written, last_.rejections_written);
  AddStoreDelta(rejections_dropped_, now.rejections_dropped, last_.rejections_dropped);
  AddStoreObservations(sync_seconds_, now.sync_seconds, last_.sync_seconds);
  AddStoreObservations(group_commit_advances_, now.group_commit_advances,
                       last_.group_commit_advances);
  last_ = now;
}

void RocksDbStoreMetrics::SampleSyncWindow() {
  sync_window_.Sample(store_.stats().sync_seconds.counts);
}

}  // namespace fencegate::gateway
