#include "gateway/observability/sync_latency_window.h"

#include <array>
#include <cstdint>

#include <gtest/gtest.h>

namespace fencegate::gateway {
namespace {

constexpr std::array<double, 3> kSyncWindowBounds = {0.001, 0.01, 0.1};

TEST(SyncLatencyWindowTest, NoPercentileBeforeTwoSamplesOrWithoutSyncs) {
  SyncLatencyWindow window(kSyncWindowBounds);
  EXPECT_FALSE(window.P99Seconds().has_value());
  window.Sample(std::array<std::uint64_t, 4>{5, 0, 0, 0});
  EXPECT_FALSE(window.P99Seconds().has_value());
  window.Sample(std::array<std::uint64_t, 4>{5, 0, 0, 0});  // nothing new in that second
  EXPECT_FALSE(window.P99Seconds().has_value());
}

TEST(SyncLatencyWindowTest, ThePercentileIsTheBucketHolding99PercentOfTheMinutesSyncs) {
  SyncLatencyWindow window(kSyncWindowBounds);
  window.Sample(std::array<std::uint64_t, 4>{1000, 1000, 0, 0});  // before the window: ignored
  window.Sample(std::array<std::uint64_t, 4>{1099, 1000, 0, 0});  // 99 fast syncs
  ASSERT_TRUE(window.P99Seconds().has_value());
  EXPECT_DOUBLE_EQ(*window.P99Seconds(), 0.001);
  window.Sample(std::array<std::uint64_t, 4>{1099, 1000, 2, 0});  // 2 slow ones of 101
  EXPECT_DOUBLE_EQ(*window.P99Seconds(), 0.1);
}

TEST(SyncLatencyWindowTest, SyncsOlderThanAMinuteLeaveTheWindow) {
  SyncLatencyWindow window(kSyncWindowBounds);
  window.Sample(std::array<std::uint64_t, 4>{0, 0, 0, 0});
  window.Sample(std::array<std::uint64_t, 4>{0, 0, 50, 0});  // slow syncs in the first second
  EXPECT_DOUBLE_EQ(*window.P99Seconds(), 0.1);
  // A minute of fast syncs afterwards: the slow ones fall out of the 60-second difference.
  for (std::uint64_t second = 1; second <= SyncLatencyWindow::kSeconds; ++second) {
    window.Sample(std::array<std::uint64_t, 4>{second * 10, 0, 50, 0});
  }
  EXPECT_DOUBLE_EQ(*window.P99Seconds(), 0.001);
}

TEST(SyncLatencyWindowTest, APercentileAboveTheLastBoundIsUnknown) {
  SyncLatencyWindow window(kSyncWindowBounds);
  window.Sample(std::array<std::uint64_t, 4>{0, 0, 0, 0});
  window.Sample(std::array<std::uint64_t, 4>{0, 0, 0, 3});
  EXPECT_FALSE(window.P99Seconds().has_value());
}

}  // namespace
}  // namespace fencegate::gateway
