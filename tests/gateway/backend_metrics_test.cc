// The backends' metrics computed at a scrape (gateway/observability/backend_metrics.h): names,
// labels (the configured url as `server`) and values, rendered with the gateway's exposition.
#include "gateway/observability/backend_metrics.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gateway/observability/metrics.h"

namespace fencegate::gateway {
namespace {

using adapters::UpstreamServers;

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(BackendMetricsTest, EveryServerAndBackendSeriesWithItsValue) {
  BackendSample api;
  api.backend = "api";
  UpstreamServers::ServerSnapshot up;
  up.url = "http://10.0.0.1:9000";
  up.in_flight = 2;
  up.health_checks_passed = 5;
  UpstreamServers::ServerSnapshot down;
  down.url = "http://10.0.0.2:9000";
  down.usable = false;
  down.ejected = true;
  down.ejections = 3;
  down.health_checks_failed = 4;
  api.servers = {up, down};
  api.counters.retries_connect_failed = 6;
  api.counters.retries_tls_failed = 1;
  api.counters.overload_max_connections = 7;
  api.counters.overload_max_pending = 8;
  api.counters.no_healthy_server = 9;
  api.counters.orphaned_locks_released = 10;

  GatewayMetrics metrics({"r"}, 2);
  metrics.BackendUpstreamDuration("r", "api")->Observe(1, 0.003);
  const std::string text = metrics.RenderText(BackendFamilies({api}));

  EXPECT_TRUE(Has(
      text, "fencegate_backend_server_healthy{backend=\"api\",server=\"http://10.0.0.1:9000\"} 1"))
      << text;
  EXPECT_TRUE(Has(
      text, "fencegate_backend_server_healthy{backend=\"api\",server=\"http://10.0.0.2:9000\"} 0"));
  EXPECT_TRUE(
      Has(text, "fencegate_backend_in_flight{backend=\"api\",server=\"http://10.0.0.1:9000\"} 2"));
  EXPECT_TRUE(
      Has(text,
          "fencegate_backend_ejections_total{backend=\"api\",server=\"http://10.0.0.2:9000\"} 3"));
  EXPECT_TRUE(Has(text,
                  "fencegate_backend_health_checks_total{backend=\"api\",server=\"http://"
                  "10.0.0.1:9000\",result=\"passed\"} 5"));
  EXPECT_TRUE(Has(text,
                  "fencegate_backend_health_checks_total{backend=\"api\",server=\"http://"
                  "10.0.0.2:9000\",result=\"failed\"} 4"));
  EXPECT_TRUE(
      Has(text, "fencegate_backend_retries_total{backend=\"api\",reason=\"connect_failed\"} 6"));
  EXPECT_TRUE(
      Has(text, "fencegate_backend_retries_total{backend=\"api\",reason=\"tls_failed\"} 1"));
  EXPECT_TRUE(Has(
      text,
      "fencegate_backend_overload_refusals_total{backend=\"api\",limit=\"max_connections\"} 7"));
  EXPECT_TRUE(Has(
      text, "fencegate_backend_overload_refusals_total{backend=\"api\",limit=\"max_pending\"} 8"));
  EXPECT_TRUE(Has(text, "fencegate_backend_no_healthy_total{backend=\"api\"} 9"));
  EXPECT_TRUE(Has(text, "fencegate_backend_orphaned_locks_released_total{backend=\"api\"} 10"));
  EXPECT_TRUE(Has(text, "# TYPE fencegate_backend_ejections_total counter"));
  EXPECT_TRUE(Has(text, "# TYPE fencegate_backend_server_healthy gauge"));
  // The upstream time histogram, by route and backend, beside the route histograms.
  EXPECT_TRUE(Has(text, "# TYPE fencegate_backend_upstream_duration_seconds histogram"));
  EXPECT_TRUE(Has(
      text, "fencegate_backend_upstream_duration_seconds_count{route=\"r\",backend=\"api\"} 1"));
  EXPECT_TRUE(Has(text,
                  "fencegate_backend_upstream_duration_seconds_bucket{route=\"r\",backend=\"api\","
                  "le=\"0.005\"} 1"));
  EXPECT_TRUE(Has(text, "fencegate_request_duration_seconds_count{route=\"r\"} 0"));
}

// One series per verdict, 1 on the current one: an alert on verdict="ignored" sees it clear.
TEST(BackendMetricsTest, ConditionVerdictsAreAStateSetPerScope) {
  BackendSample objects;
  objects.backend = "objects";
  objects.conditions = {{.scope = "photos", .verdict = adapters::ConditionVerdict::kIgnored},
                        {.scope = "logs", .verdict = adapters::ConditionVerdict::kPartial}};
  GatewayMetrics metrics({"r"}, 1);
  const std::string text = metrics.RenderText(BackendFamilies({objects}));
  EXPECT_TRUE(Has(text, "# TYPE fencegate_backend_conditions gauge")) << text;
  EXPECT_TRUE(Has(text,
                  "fencegate_backend_conditions{backend=\"objects\",scope=\"photos\","
                  "verdict=\"ignored\"} 1"));
  EXPECT_TRUE(Has(text,
                  "fencegate_backend_conditions{backend=\"objects\",scope=\"photos\","
                  "verdict=\"enforced\"} 0"));
  EXPECT_TRUE(Has(text,
                  "fencegate_backend_conditions{backend=\"objects\",scope=\"logs\","
                  "verdict=\"partial\"} 1"));
  EXPECT_TRUE(Has(text,
                  "fencegate_backend_conditions{backend=\"objects\",scope=\"logs\","
                  "verdict=\"ignored\"} 0"));
}

TEST(BackendMetricsTest, AnUpstreamHistogramIsMadeOncePerRouteAndBackend) {
  GatewayMetrics metrics({"r"}, 1);
  EXPECT_EQ(metrics.BackendUpstreamDuration("r", "api"),
            metrics.BackendUpstreamDuration("r", "api"));
  EXPECT_NE(metrics.BackendUpstreamDuration("r", "api"),
            metrics.BackendUpstreamDuration("r", "objects"));
  EXPECT_NE(metrics.BackendUpstreamDuration("r", "api"),
            metrics.BackendUpstreamDuration("s", "api"));
}

}  // namespace
}  // namespace fencegate::gateway
