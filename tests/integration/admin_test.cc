#include <string>

#include <gtest/gtest.h>

#include "tests/support/admin_client.h"
#include "tests/support/eventually.h"
#include "tests/support/held_put.h"
#include "tests/support/http_gateway_fixture.h"

namespace fencegate::integration {
namespace {

using AdminTest = HttpGatewayTest;

TEST_F(AdminTest, MetricsCountAdmittedAndRefusedWrites) {
  // Admitted: 1, 1 again (equal), 2, 3. Refused: stale 1 and 2, one missing, one invalid.
  for (const char* token : {"1", "1", "2", "3"}) EXPECT_EQ(Put("/kv/m/x", token).result_int(), 200);
  EXPECT_EQ(Put("/kv/m/x", "1").result_int(), 409);
  EXPECT_EQ(Put("/kv/m/x", "2").result_int(), 409);
  EXPECT_EQ(Put("/kv/m/x", std::nullopt).result_int(), 428);
  EXPECT_EQ(Put("/kv/m/x", "x").result_int(), 400);

  std::string metrics = FetchMetricsText(gateway_->admin_port());
  ASSERT_FALSE(metrics.empty());
  EXPECT_EQ(MetricValue(metrics, "fencegate_writes_admitted_total", R"(route="kv")"), 4.0);
  EXPECT_EQ(
      MetricValue(metrics, "fencegate_writes_rejected_total", R"(route="kv",reason="stale_token")"),
      2.0);
  EXPECT_EQ(MetricValue(metrics, "fencegate_writes_rejected_total",
                        R"(route="kv",reason="missing_token")"),
            1.0);
  EXPECT_EQ(MetricValue(metrics, "fencegate_writes_rejected_total",
                        R"(route="kv",reason="invalid_token")"),
            1.0);
  // 1 (first token on a new fence), 2 and 3 raise the fence; the repeated 1 does not.
  EXPECT_EQ(MetricValue(metrics, "fencegate_fence_advances_total", R"(route="kv")"), 3.0);
  // The embedded store saw the same three, one after the other: one synced write each.
  EXPECT_EQ(MetricValue(metrics, "fencegate_store_advances_total", ""), 3.0);
  EXPECT_EQ(MetricValue(metrics, "fencegate_store_sync_writes_total", ""), 3.0);
  EXPECT_EQ(MetricValue(metrics, "fencegate_store_failed_writes_total", ""), 0.0);
  EXPECT_EQ(MetricValue(metrics, "fencegate_store_rejections_dropped_total", ""), 0.0);
}

TEST_F(AdminTest, MetricsShowRequestsInFlightAndOpenConnections) {
  auto held = PutHeldAtBackend(gateway_->traffic_port(), "/kv/held/x", "1", 1500, "held");
  // The held PUT is in flight on its own connection until the backend answers.
  double in_flight = 0;
  double connections = 0;
  Eventually([&] {
    const std::string metrics = FetchMetricsText(gateway_->admin_port());
    in_flight = MetricValue(metrics, "fencegate_requests_in_flight", "").value_or(-1);
    connections = MetricValue(metrics, "fencegate_connections_open", "").value_or(-1);
    return in_flight > 0;
  });
  EXPECT_EQ(in_flight, 1.0);
  EXPECT_EQ(connections, 1.0);
  auto answer = held.get();
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->result_int(), 200);
  // Answered and closed (Fetch does not keep the connection).
  EXPECT_TRUE(GatewayIdle(gateway_->admin_port()));
}

TEST_F(AdminTest, FenceStateAndRejectionTrail) {
  EXPECT_EQ(Put("/kv/f/x", "7").result_int(), 200);
  EXPECT_EQ(Put("/kv/f/x", "3").result_int(), 409);
  EXPECT_EQ(Put("/kv/f/x", "5").result_int(), 409);

  std::string error;
  std::optional<boost::json::value> fence =
      FetchAdminJson(gateway_->admin_port(), "/admin/fences/kv:f", &error);
  ASSERT_TRUE(fence.has_value()) << error;
  EXPECT_EQ(fence->as_object().at("highest_token").to_number<std::uint64_t>(), 7u);

  std::optional<boost::json::value> rejections =
      FetchAdminJson(gateway_->admin_port(), "/admin/rejections?limit=1", &error);
  ASSERT_TRUE(rejections.has_value()) << error;
  const boost::json::array& newest_page = rejections->at("rejections").as_array();
  ASSERT_EQ(newest_page.size(), 1u);
  EXPECT_TRUE(rejections->at("next").is_number());  // an older one follows
  const boost::json::object& newest = newest_page[0].as_object();
  EXPECT_EQ(newest.at("fence_key").as_string(), "kv:f");
  EXPECT_EQ(newest.at("presented_token").to_number<std::uint64_t>(), 5u);

  rejections = FetchAdminJson(gateway_->admin_port(), "/admin/rejections?limit=10", &error);
  ASSERT_TRUE(rejections.has_value()) << error;
  const boost::json::array& all = rejections->at("rejections").as_array();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_TRUE(rejections->at("next").is_null());
  EXPECT_EQ(all[1].as_object().at("presented_token").to_number<std::uint64_t>(), 3u);
}

TEST_F(AdminTest, HealthAndReadiness) {
  for (const char* target : {"/healthz", "/readyz"}) {
    std::optional<Response> response =
        Fetch(gateway_->admin_port(), MakeRequest(http::verb::get, target));
    ASSERT_TRUE(response.has_value()) << target;
    EXPECT_EQ(response->result_int(), 200) << target;
  }
}

}  // namespace
}  // namespace fencegate::integration
