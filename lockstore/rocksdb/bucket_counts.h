#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace fencegate::lockstore {

// Observations counted by fixed upper bounds: the store's own distributions (sync latency,
// group-commit size), kept without Prometheus types. The gateway exports them as histograms
// (gateway/observability/rocksdb_store_metrics.h). Counts are per bucket, not cumulative, and
// monotonic: a reader takes the difference between two copies.
template <std::size_t N>
struct BucketCounts {
  std::array<std::uint64_t, N + 1>
      counts{};  // [i]: value <= bounds[i] and > bounds[i-1]; [N]: above
  double sum = 0;

  void Observe(const std::array<double, N>& bounds, double value) {
    std::size_t bucket = 0;
    while (bucket < N && value > bounds[bucket]) ++bucket;
    ++counts[bucket];
    sum += value;
  }
};

}  // namespace fencegate::lockstore
