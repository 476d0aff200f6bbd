#include "gateway/observability/sharded_histogram.h"

#include <limits>
#include <utility>

namespace fencegate::gateway {

ShardedHistogram::ShardedHistogram(std::vector<double> bounds, std::size_t shards)
    : bounds_(std::move(bounds)), shard_count_(shards), shards_(std::make_unique<Shard[]>(shards)) {
  for (std::size_t s = 0; s < shard_count_; ++s) {
    shards_[s].counts = std::make_unique<std::atomic<std::uint64_t>[]>(bounds_.size() + 1);
    for (std::size_t b = 0; b <= bounds_.size(); ++b) shards_[s].counts[b] = 0;
  }
}

prometheus::ClientMetric::Histogram ShardedHistogram::Snapshot() const {
  prometheus::ClientMetric::Histogram out;
  std::vector<std::uint64_t> counts(bounds_.size() + 1, 0);
  double sum = 0;
  for (std::size_t s = 0; s < shard_count_; ++s) {
    for (std::size_t b = 0; b <= bounds_.size(); ++b) {
      counts[b] += shards_[s].counts[b].load(std::memory_order_relaxed);
    }
    sum += shards_[s].sum.load(std::memory_order_relaxed);
  }
  std::uint64_t cumulative = 0;
  for (std::size_t b = 0; b <= bounds_.size(); ++b) {
    cumulative += counts[b];
    prometheus::ClientMetric::Bucket bucket;
    bucket.cumulative_count = cumulative;
    bucket.upper_bound = b < bounds_.size() ? bounds_[b] : std::numeric_limits<double>::infinity();
    out.bucket.push_back(bucket);
  }
  out.sample_count = cumulative;
  out.sample_sum = sum;
  return out;
}

}  // namespace fencegate::gateway
