#include "gateway/observability/traffic_series.h"

#include <gtest/gtest.h>

#include <numeric>

namespace fencegate::gateway {
namespace {

RouteTotals SeriesTotals(std::string route, std::uint64_t admitted, std::uint64_t stale,
                         std::uint64_t missing = 0) {
  RouteTotals totals;
  totals.route = std::move(route);
  totals.admitted = admitted;
  totals.refused[static_cast<std::size_t>(RejectionReason::kStaleToken)] = stale;
  totals.refused[static_cast<std::size_t>(RejectionReason::kMissingToken)] = missing;
  return totals;
}

TEST(TrafficSeriesTest, FirstSampleIsTheBaselineThenDeltasGoToTheirSecond) {
  TrafficSeries series;
  series.Sample(100, 1'000'000, {SeriesTotals("files", 50, 7)});  // counted before: not attributed
  series.Sample(101, 1'001'000, {SeriesTotals("files", 53, 9, 1)});
  series.Sample(102, 1'002'000, {SeriesTotals("files", 53, 10, 1)});
  EXPECT_EQ(series.last_sample_unix_ms(), 1'002'000);

  const auto per_second = series.PerSecond();
  ASSERT_EQ(per_second.size(), 1u);
  EXPECT_EQ(per_second[0].route, "files");
  ASSERT_EQ(per_second[0].admitted.size(), TrafficSeries::kSeconds);
  EXPECT_EQ(per_second[0].admitted[58], 3u);  // second 101
  EXPECT_EQ(per_second[0].admitted[59], 0u);  // second 102, the newest
  EXPECT_EQ(per_second[0].refused[58], 3u);   // 2 stale + 1 missing
  EXPECT_EQ(per_second[0].refused[59], 1u);
  EXPECT_EQ(per_second[0].admitted[57], 0u);

  const TrafficSeries::Window minute = series.LastMinute();
  ASSERT_EQ(minute.admitted.size(), 1u);
  EXPECT_EQ(minute.admitted[0].second, 3u);
  ASSERT_EQ(minute.refusals.size(), 2u);
  EXPECT_EQ(minute.refusals[0].reason, RejectionReason::kStaleToken);
  EXPECT_EQ(minute.refusals[0].count, 3u);
  EXPECT_EQ(minute.refusals[1].reason, RejectionReason::kMissingToken);
  EXPECT_EQ(minute.refusals[1].count, 1u);
}

TEST(TrafficSeriesTest, OldSecondsLeaveTheMinuteButStayInTheHour) {
  TrafficSeries series;
  series.Sample(0, 0, {SeriesTotals("r", 0, 0)});
  series.Sample(1, 0, {SeriesTotals("r", 10, 2)});
  // Seventy seconds later (the admin thread was busy: missed samples leave zeros).
  series.Sample(71, 0, {SeriesTotals("r", 15, 2)});
  const TrafficSeries::Window minute = series.LastMinute();
  EXPECT_EQ(minute.admitted.at(0).second, 5u);
  EXPECT_TRUE(minute.refusals.empty());
  const TrafficSeries::Window hour = series.LastHour();
  EXPECT_EQ(hour.admitted.at(0).second, 15u);
  ASSERT_EQ(hour.refusals.size(), 1u);
  EXPECT_EQ(hour.refusals[0].count, 2u);
  // Only second 71 remains in the per-second ring.
  const std::vector<std::uint64_t> admitted = series.PerSecond().at(0).admitted;
  EXPECT_EQ(admitted.back(), 5u);
  EXPECT_EQ(std::accumulate(admitted.begin(), admitted.end(), std::uint64_t{0}), 5u);
  // An hour and more later everything has aged out.
  series.Sample(71 + 3700, 0, {SeriesTotals("r", 15, 2)});
  EXPECT_EQ(series.LastHour().admitted.at(0).second, 0u);
  EXPECT_EQ(series.LastMinute().admitted.at(0).second, 0u);
}

TEST(TrafficSeriesTest, ARouteAddedLaterStartsFromItsOwnBaseline) {
  TrafficSeries series;
  series.Sample(5, 0, {SeriesTotals("a", 1, 0)});
  series.Sample(6, 0, {SeriesTotals("a", 2, 0), SeriesTotals("b", 40, 4)});
  series.Sample(7, 0, {SeriesTotals("a", 2, 0), SeriesTotals("b", 41, 4)});
  const TrafficSeries::Window minute = series.LastMinute();
  ASSERT_EQ(minute.admitted.size(), 2u);
  EXPECT_EQ(minute.admitted[0], (std::pair<std::string, std::uint64_t>{"a", 1}));
  EXPECT_EQ(minute.admitted[1], (std::pair<std::string, std::uint64_t>{"b", 1}));
  EXPECT_TRUE(minute.refusals.empty());
}

TEST(TrafficSeriesTest, ReadsTheRouteCountersTheRequestPathKeeps) {
  GatewayMetrics metrics({"files", "docs"}, 1);
  metrics.route(0).writes_admitted->Increment(3);
  metrics.route(0).CountRejection(RejectionReason::kStaleToken);
  metrics.route(1).CountRejection(RejectionReason::kBarrierTimeout);
  const std::vector<RouteTotals> totals = ReadRouteTotals(metrics);
  ASSERT_EQ(totals.size(), 2u);  // by name; the unrouted series is not a route
  EXPECT_EQ(totals[0].route, "docs");
  EXPECT_EQ(totals[0].refused[static_cast<std::size_t>(RejectionReason::kBarrierTimeout)], 1u);
  EXPECT_EQ(totals[1].route, "files");
  EXPECT_EQ(totals[1].admitted, 3u);
  EXPECT_EQ(totals[1].refused[static_cast<std::size_t>(RejectionReason::kStaleToken)], 1u);
}

}  // namespace
}  // namespace fencegate::gateway
