#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace fencegate::gateway {

// The 99th percentile of the store's synced-write (fsync) latency over the last minute, for
// GET /admin/summary. The store counts each sync in fixed buckets (cumulative since it opened);
// this keeps one copy of those counts per second in a ring of 61, so the last minute is the
// difference between the newest and the oldest copy. Fixed memory, nothing per request. Not
// thread-safe: the admin thread samples and reads it.
class SyncLatencyWindow {
 public:
  static constexpr std::size_t kSeconds = 60;

  // `bounds`: the buckets' upper bounds in seconds, increasing; the counts have one more entry
  // (above the last bound).
  explicit SyncLatencyWindow(std::span<const double> bounds);

  // Takes the store's cumulative per-bucket counts (bounds().size() + 1 of them), once a second.
  void Sample(std::span<const std::uint64_t> cumulative_counts);

  // The upper bound of the bucket holding the 99th percentile of the syncs of the last minute, in
  // seconds: the latency 99% of them stayed within (bucket resolution, like a Prometheus
  // histogram's). nullopt when no sync happened in that minute or the percentile lies above the
  // last bound.
  std::optional<double> P99Seconds() const;

 private:
  std::vector<double> bounds_;
  std::vector<std::vector<std::uint64_t>> ring_;  // kSeconds + 1 samples, reused in place
  std::size_t next_ = 0;                          // the slot the next sample goes to
  std::size_t size_ = 0;                          // filled slots
};

}  // namespace fencegate::gateway
