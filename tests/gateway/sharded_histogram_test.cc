// ShardedHistogram (gateway/observability/sharded_histogram.h) and its exposition through
// GatewayMetrics: observations made by several threads, each on its own shard, add up to one
// Prometheus histogram per route.
#include "gateway/observability/sharded_histogram.h"

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "gateway/observability/metrics.h"

namespace fencegate::gateway {
namespace {

TEST(ShardedHistogramTest, ShardsAddUpToCumulativeBuckets) {
  ShardedHistogram histogram({0.1, 1.0}, 3);
  std::vector<std::thread> threads;
  for (std::size_t shard = 0; shard < 3; ++shard) {
    threads.emplace_back([&histogram, shard] {
      for (int i = 0; i < 1000; ++i) {
        histogram.Observe(shard, 0.05);  // le=0.1
        histogram.Observe(shard, 0.1);   // le=0.1: a bound is inclusive
        histogram.Observe(shard, 0.5);   // le=1
        histogram.Observe(shard, 7.0);   // +Inf only
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const prometheus::ClientMetric::Histogram snapshot = histogram.Snapshot();
  ASSERT_EQ(snapshot.bucket.size(), 3u);
  EXPECT_EQ(snapshot.bucket[0].upper_bound, 0.1);
  EXPECT_EQ(snapshot.bucket[0].cumulative_count, 6000u);
  EXPECT_EQ(snapshot.bucket[1].upper_bound, 1.0);
  EXPECT_EQ(snapshot.bucket[1].cumulative_count, 9000u);
  EXPECT_TRUE(std::isinf(snapshot.bucket[2].upper_bound));
  EXPECT_EQ(snapshot.bucket[2].cumulative_count, 12000u);
  EXPECT_EQ(snapshot.sample_count, 12000u);
  EXPECT_NEAR(snapshot.sample_sum, 3000 * (0.05 + 0.1 + 0.5 + 7.0), 1e-6);
}

TEST(ShardedHistogramTest, ExposedPerRouteInTheTextFormat) {
  GatewayMetrics metrics({"files"}, 2);
  metrics.route(0).request_duration->Observe(0, 0.0007);
  metrics.route(0).request_duration->Observe(1, 3.0);
  metrics.route(0).barrier_wait->Observe(1, 0.0002);
  metrics.unrouted().request_duration->Observe(0, 0.2);
  const std::string text = metrics.RenderText();
  EXPECT_NE(text.find("# TYPE fencegate_request_duration_seconds histogram"), std::string::npos)
      << text;
  EXPECT_NE(text.find("fencegate_request_duration_seconds_bucket{route=\"files\",le=\"0.0005\"} 0"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fencegate_request_duration_seconds_bucket{route=\"files\",le=\"0.001\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("fencegate_request_duration_seconds_bucket{route=\"files\",le=\"+Inf\"} 2"),
            std::string::npos);
  EXPECT_NE(text.find("fencegate_request_duration_seconds_count{route=\"files\"} 2"),
            std::string::npos);
  EXPECT_NE(text.find("fencegate_request_duration_seconds_count{route=\"-\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("fencegate_barrier_wait_seconds_bucket{route=\"files\",le=\"0.0005\"} 1"),
            std::string::npos);
  // The registry's own metrics are still there.
  EXPECT_NE(text.find("fencegate_requests_total"), std::string::npos);
}

}  // namespace
}  // namespace fencegate::gateway
