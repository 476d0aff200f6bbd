#include <signal.h>

#include <future>
#include <string>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

#include "tests/support/eventually.h"
#include "tests/support/held_put.h"
#include "tests/support/http_gateway_fixture.h"

namespace fencegate::integration {
namespace {

using LifecycleTest = HttpGatewayTest;

TEST_F(LifecycleTest, SigtermDrainsInFlightRequestThenExitsZero) {
  auto slow = PutHeldAtBackend(gateway_->traffic_port(), "/kv/s/x", "1", 1000, "slow");
  ASSERT_TRUE(backend_.WaitForArrived(1, std::chrono::seconds(5)));
  gateway_->process().Signal(SIGTERM);

  std::optional<Response> response = slow.get();
  ASSERT_TRUE(response.has_value());
  EXPECT_EQ(response->result_int(), 200);
  EXPECT_EQ(gateway_->process().Wait(std::chrono::seconds(10)), 0) << gateway_->process().Stderr();
}

class ShortDrainTest : public HttpGatewayTest {
 protected:
  void CustomizeConfig(GatewayConfig* config) const override {
    (*config)["timeouts"]["shutdown_drain"] = "200ms";
  }
};

// A request still running when the drain deadline passes is cut, and the exit code says so.
TEST_F(ShortDrainTest, DrainDeadlineCutsRequestExitsFour) {
  auto slow = PutHeldAtBackend(gateway_->traffic_port(), "/kv/s/x", "1", 1500, "slow");
  ASSERT_TRUE(backend_.WaitForArrived(1, std::chrono::seconds(5)));
  gateway_->process().Signal(SIGTERM);
  EXPECT_EQ(gateway_->process().Wait(std::chrono::seconds(10)), 4) << gateway_->process().Stderr();
  std::optional<Response> response = slow.get();
  EXPECT_FALSE(response.has_value() && response->result_int() == 200);
}

TEST_F(LifecycleTest, AccessLogLineDescribesTheRequest) {
  Response response = Put("/kv/log/x", "42");
  ASSERT_EQ(response.result_int(), 200);
  const std::string request_id(response["X-Request-Id"]);
  ASSERT_FALSE(request_id.empty());

  // The line is written as the exchange ends: wait for it to reach the file.
  std::string log;
  ASSERT_TRUE(Eventually([&] {
    log = ReadWholeFile(dir_.Join("access.log"));
    return log.find('\n') != std::string::npos;
  })) << "no access log line";
  const boost::json::object line = boost::json::parse(log.substr(0, log.find('\n'))).as_object();
  EXPECT_EQ(line.at("request_id").as_string(), request_id);
  EXPECT_EQ(line.at("route").as_string(), "kv");
  EXPECT_EQ(line.at("method").as_string(), "PUT");
  EXPECT_EQ(line.at("path").as_string(), "/kv/log/x");
  EXPECT_EQ(line.at("status").to_number<int>(), 200);
  EXPECT_EQ(line.at("fence_key").as_string(), "kv:log");
  EXPECT_EQ(line.at("presented_token").to_number<std::uint64_t>(), 42u);
  EXPECT_EQ(line.at("outcome").as_string(), "admitted");
  EXPECT_EQ(line.at("upstream_status").to_number<int>(), 200);
  EXPECT_EQ(line.at("bytes_in").to_number<std::uint64_t>(), 4u);
  // The backend's body, counted although the response went out at once (no write completion).
  ASSERT_FALSE(response.body().empty());
  EXPECT_EQ(line.at("bytes_out").to_number<std::uint64_t>(), response.body().size());
  EXPECT_EQ(line.at("client").as_string(), "127.0.0.1");
  EXPECT_TRUE(line.contains("time"));
  EXPECT_TRUE(line.contains("duration_ms"));
}

}  // namespace
}  // namespace fencegate::integration
