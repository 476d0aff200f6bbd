#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gateway/observability/metrics.h"

namespace fencegate::gateway {

// Cumulative counts of one route as the route metrics hold them (never reset).
struct RouteTotals {
  std::string route;
  std::uint64_t admitted = 0;  // fencegate_writes_admitted_total
  std::array<std::uint64_t, kRejectionReasonCount>
      refused{};  // ..._writes_rejected_total by reason
};

// Reads every named route's totals from the metrics the request path already keeps.
std::vector<RouteTotals> ReadRouteTotals(const GatewayMetrics& metrics);

// Admitted and refused fenced writes per route over the last minute and hour, for
// GET /admin/summary: per-second counts in a ring of 60 seconds and per-minute counts in a ring
// of 60 minutes, filled by sampling the cumulative route counters once a second. Memory is fixed
// per route; nothing runs per request. Not thread-safe: the admin thread samples and reads it.
class TrafficSeries {
 public:
  static constexpr std::size_t kSeconds = 60;
  static constexpr std::size_t kMinutes = 60;

  // Takes the totals at monotonic whole second `second` (increasing from call to call);
  // `unix_ms` is the wall-clock time of the sample. What a route counted since its previous
  // sample goes to this second; a route's first sample only sets its baseline, so counts from
  // before the series started are not attributed to its first second.
  void Sample(std::int64_t second, std::int64_t unix_ms, const std::vector<RouteTotals>& totals);

  struct RouteSeconds {
    std::string route;
    std::vector<std::uint64_t> admitted;  // kSeconds counts, oldest first, ending at last sample
    std::vector<std::uint64_t> refused;   // all reasons together
  };
  std::vector<RouteSeconds> PerSecond() const;

  struct RefusalCount {
    std::string route;
    RejectionReason reason;
    std::uint64_t count = 0;
  };
  struct Window {
    std::vector<std::pair<std::string, std::uint64_t>> admitted;  // every route, by name
    std::vector<RefusalCount> refusals;                           // non-zero counts only
  };
  Window LastMinute() const;  // the kSeconds seconds ending at the last sample
  Window LastHour() const;    // the kMinutes minutes ending with the last sample's minute

  // Wall-clock time of the last sample (0: none yet).
  std::int64_t last_sample_unix_ms() const { return last_unix_ms_; }

 private:
  struct Bucket {
    std::int64_t stamp = -1;  // the second (or minute) counted here; another: stale, reads as 0
    std::uint64_t admitted = 0;
    std::array<std::uint64_t, kRejectionReasonCount> refused{};
  };
  struct Route {
    RouteTotals last;
    std::array<Bucket, kSeconds> seconds;
    std::array<Bucket, kMinutes> minutes;
  };

  static void Add(Bucket& bucket, std::int64_t stamp, std::uint64_t admitted,
                  const std::array<std::uint64_t, kRejectionReasonCount>& refused);
  template <std::size_t N>
  static Window Sum(const std::map<std::string, Route>& routes, std::array<Bucket, N> Route::*ring,
                    std::int64_t newest);

  std::map<std::string, Route> routes_;
  std::int64_t last_second_ = -1;
  std::int64_t last_unix_ms_ = 0;
};

}  // namespace fencegate::gateway
