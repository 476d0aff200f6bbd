// GatewayMetrics::RouteNamed: a route a reload adds gets its series; one it keeps or brings back
// keeps counting into the same ones.
#include <string>

#include <gtest/gtest.h>

#include "gateway/observability/metrics.h"

namespace fencegate::gateway {
namespace {

TEST(RouteMetricsTest, RoutesNamedAtStartAndAddedLaterShareOneSetOfSeries) {
  GatewayMetrics metrics({"files"}, 1);
  EXPECT_EQ(&metrics.RouteNamed("files"), &metrics.route(0));
  const RouteMetrics& added = metrics.RouteNamed("extra");
  EXPECT_NE(&added, &metrics.route(0));
  EXPECT_NE(&added, &metrics.unrouted());
  EXPECT_EQ(&metrics.RouteNamed("extra"), &added);

  added.writes_admitted->Increment();
  added.request_duration->Observe(0, 0.01);
  const std::string text = metrics.RenderText();
  EXPECT_NE(text.find("fencegate_writes_admitted_total{route=\"extra\"} 1"), std::string::npos)
      << text;
  EXPECT_NE(text.find("fencegate_request_duration_seconds_count{route=\"extra\"} 1"),
            std::string::npos)
      << text;
  // The unrouted requests' series stay one, with no write series.
  EXPECT_EQ(text.find("fencegate_writes_admitted_total{route=\"-\"}"), std::string::npos);
}

}  // namespace
}  // namespace fencegate::gateway
