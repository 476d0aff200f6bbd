#include "gateway/observability/traffic_series.h"

namespace fencegate::gateway {
namespace {

std::uint64_t TrafficCounterValue(const prometheus::Counter* counter) {
  return counter == nullptr ? 0 : static_cast<std::uint64_t>(counter->Value());
}

// What a cumulative counter added since `before`; a counter that went backwards (it cannot,
// but a route's series must never show a wrapped count) counts from zero.
std::uint64_t TrafficDelta(std::uint64_t now, std::uint64_t before) {
  return now >= before ? now - before : now;
}

}  // namespace

std::vector<RouteTotals> ReadRouteTotals(const GatewayMetrics& metrics) {
  std::vector<RouteTotals> out;
  metrics.ForEachRoute([&out](const std::string& name, const RouteMetrics& route) {
    RouteTotals& totals = out.emplace_back();
    totals.route = name;
    totals.admitted = TrafficCounterValue(route.writes_admitted);
    for (std::size_t i = 0; i < kRejectionReasonCount; ++i) {
      totals.refused[i] = TrafficCounterValue(route.writes_rejected[i]);
    }
  });
  return out;
}

void TrafficSeries::Add(Bucket& bucket, std::int64_t stamp, std::uint64_t admitted,
                        const std::array<std::uint64_t, kRejectionReasonCount>& refused) {
  if (bucket.stamp != stamp) bucket = Bucket{stamp, 0, {}};
  bucket.admitted += admitted;
  for (std::size_t i = 0; i < kRejectionReasonCount; ++i) bucket.refused[i] += refused[i];
}

void TrafficSeries::Sample(std::int64_t second, std::int64_t unix_ms,
                           const std::vector<RouteTotals>& totals) {
  if (second <= last_second_) return;
  last_second_ = second;
  last_unix_ms_ = unix_ms;
  const std::int64_t minute = second / 60;
  for (const RouteTotals& now : totals) {
    auto [it, added] = routes_.try_emplace(now.route);
    Route& route = it->second;
    if (!added) {
      std::array<std::uint64_t, kRejectionReasonCount> refused{};
      for (std::size_t i = 0; i < kRejectionReasonCount; ++i) {
        refused[i] = TrafficDelta(now.refused[i], route.last.refused[i]);
      }
      const std::uint64_t admitted = TrafficDelta(now.admitted, route.last.admitted);
      Add(route.seconds[static_cast<std::size_t>(second) % kSeconds], second, admitted, refused);
      Add(route.minutes[static_cast<std::size_t>(minute) % kMinutes], minute, admitted, refused);
    }
    route.last = now;
  }
}

std::vector<TrafficSeries::RouteSeconds> TrafficSeries::PerSecond() const {
  std::vector<RouteSeconds> out;
  for (const auto& [name, route] : routes_) {
    RouteSeconds& series = out.emplace_back();
    series.route = name;
    series.admitted.assign(kSeconds, 0);
    series.refused.assign(kSeconds, 0);
    if (last_second_ < 0) continue;
    for (std::size_t i = 0; i < kSeconds; ++i) {
      const std::int64_t second = last_second_ - static_cast<std::int64_t>(kSeconds - 1 - i);
      if (second < 0) continue;
      const Bucket& bucket = route.seconds[static_cast<std::size_t>(second) % kSeconds];
      if (bucket.stamp != second) continue;
      series.admitted[i] = bucket.admitted;
      for (std::uint64_t count : bucket.refused) series.refused[i] += count;
    }
  }
  return out;
}

template <std::size_t N>
TrafficSeries::Window TrafficSeries::Sum(const std::map<std::string, Route>& routes,
                                         std::array<Bucket, N> Route::*ring, std::int64_t newest) {
  Window window;
  for (const auto& [name, route] : routes) {
    std::uint64_t admitted = 0;
    std::array<std::uint64_t, kRejectionReasonCount> refused{};
    // A bucket counts while its stamp lies in the window; older ones are stale slots.
    for (const Bucket& bucket : route.*ring) {
      if (newest < 0 || bucket.stamp < 0 || bucket.stamp > newest ||
          bucket.stamp <= newest - static_cast<std::int64_t>(N)) {
        continue;
      }
      admitted += bucket.admitted;
      for (std::size_t i = 0; i < kRejectionReasonCount; ++i) refused[i] += bucket.refused[i];
    }
    window.admitted.emplace_back(name, admitted);
    for (std::size_t i = 0; i < kRejectionReasonCount; ++i) {
      if (refused[i] != 0) {
        window.refusals.push_back({name, static_cast<RejectionReason>(i), refused[i]});
      }
    }
  }
  return window;
}

TrafficSeries::Window TrafficSeries::LastMinute() const {
  return Sum(routes_, &Route::seconds, last_second_);
}

TrafficSeries::Window TrafficSeries::LastHour() const {
  return Sum(routes_, &Route::minutes, last_second_ < 0 ? -1 : last_second_ / 60);
}

}  // namespace fencegate::gateway
