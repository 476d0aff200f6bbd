#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <prometheus/client_metric.h>

namespace fencegate::gateway {

// A Prometheus histogram that each network thread writes into its own shard, summed only when
// scraped. prometheus::Histogram::Observe takes a mutex and makes two atomic read-modify-writes
// (~180 instructions, twice per fenced write); here one thread owns a shard, so an observation
// is a bucket search and two relaxed stores. Shard i may be written only by the thread given
// index i (NetworkThread::index()); any thread may take a snapshot.
class ShardedHistogram {
 public:
  // `bounds`: the buckets' upper bounds, increasing (the +Inf bucket is implied).
  ShardedHistogram(std::vector<double> bounds, std::size_t shards);

  void Observe(std::size_t shard, double value) {
    std::size_t bucket = 0;
    while (bucket < bounds_.size() && value > bounds_[bucket]) ++bucket;
    Shard& mine = shards_[shard];
    // One writer per shard: a load and a store, not a locked read-modify-write. Relaxed: a
    // scrape may see the count before the sum, as with any Prometheus client.
    std::atomic<std::uint64_t>& count = mine.counts[bucket];
    count.store(count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    mine.sum.store(mine.sum.load(std::memory_order_relaxed) + value, std::memory_order_relaxed);
  }

  // The sum over all shards, with cumulative bucket counts as the exposition wants them.
  prometheus::ClientMetric::Histogram Snapshot() const;

 private:
  // Each shard's sum on a cache line of its own and its counts in an allocation of their own,
  // so two threads seldom write to one line.
  struct alignas(64) Shard {
    std::unique_ptr<std::atomic<std::uint64_t>[]> counts;  // one per bound, then +Inf
    std::atomic<double> sum{0};
  };

  std::vector<double> bounds_;
  std::size_t shard_count_;
  std::unique_ptr<Shard[]> shards_;
};

}  // namespace fencegate::gateway
