// ReloadMetrics: reload counts, the last success time and the config_info series.
#include "gateway/observability/reload_metrics.h"

#include <map>
#include <string>

#include <gtest/gtest.h>
#include <prometheus/registry.h>

namespace fencegate::gateway {
namespace {

// name{label=value} -> value, of every gauge and counter sample in `registry`.
std::map<std::string, double> Samples(prometheus::Registry& registry) {
  std::map<std::string, double> samples;
  for (const auto& family : registry.Collect()) {
    for (const auto& metric : family.metric) {
      std::string key = family.name;
      for (const auto& label : metric.label) key += "{" + label.name + "=" + label.value + "}";
      samples[key] = family.type == prometheus::MetricType::Counter ? metric.counter.value
                                                                    : metric.gauge.value;
    }
  }
  return samples;
}

TEST(ReloadMetricsTest, StartCountsAsTheLastSuccessWithNoReloadCounted) {
  prometheus::Registry registry;
  ReloadMetrics metrics(registry, "aaaa", 1'700'000'000'500);
  const auto samples = Samples(registry);
  EXPECT_EQ(samples.at("fencegate_config_reloads_total{result=success}"), 0);
  EXPECT_EQ(samples.at("fencegate_config_reloads_total{result=failure}"), 0);
  EXPECT_DOUBLE_EQ(samples.at("fencegate_config_last_reload_success_timestamp_seconds"),
                   1'700'000'000.5);
  EXPECT_EQ(samples.at("fencegate_config_info{hash=aaaa}"), 1);
}

TEST(ReloadMetricsTest, ASuccessReplacesTheHashSeriesAFailureKeepsIt) {
  prometheus::Registry registry;
  ReloadMetrics metrics(registry, "aaaa", 1'700'000'000'000);
  metrics.CountFailure();
  auto samples = Samples(registry);
  EXPECT_EQ(samples.at("fencegate_config_reloads_total{result=failure}"), 1);
  EXPECT_EQ(samples.at("fencegate_config_info{hash=aaaa}"), 1);
  EXPECT_DOUBLE_EQ(samples.at("fencegate_config_last_reload_success_timestamp_seconds"),
                   1'700'000'000);

  metrics.CountSuccess("bbbb", 1'700'000'100'000);
  samples = Samples(registry);
  EXPECT_EQ(samples.at("fencegate_config_reloads_total{result=success}"), 1);
  EXPECT_EQ(samples.count("fencegate_config_info{hash=aaaa}"), 0u);
  EXPECT_EQ(samples.at("fencegate_config_info{hash=bbbb}"), 1);
  EXPECT_DOUBLE_EQ(samples.at("fencegate_config_last_reload_success_timestamp_seconds"),
                   1'700'000'100);

  metrics.CountSuccess("bbbb", 1'700'000'200'000);  // the same file again: one series
  samples = Samples(registry);
  EXPECT_EQ(samples.at("fencegate_config_info{hash=bbbb}"), 1);
  EXPECT_EQ(samples.at("fencegate_config_reloads_total{result=success}"), 2);
}

}  // namespace
}  // namespace fencegate::gateway
