#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/support/admin_client.h"
#include "tests/support/held_put.h"
#include "tests/support/http_gateway_fixture.h"

namespace fencegate::integration {
namespace {

std::string ProblemReason(const Response& response) {
  boost::system::error_code ec;
  boost::json::value body = boost::json::parse(response.body(), ec);
  if (ec || !body.is_object() || !body.as_object().contains("reason")) return {};
  return std::string(body.as_object().at("reason").as_string());
}

class BarrierTimeoutTest : public HttpGatewayTest {
 protected:
  void CustomizeConfig(GatewayConfig* config) const override {
    (*config)["timeouts"]["barrier_wait"] = "300ms";
  }
};

// A newer token held behind an older write longer than barrier_wait is answered 503 and never
// forwarded; the fence has still moved, so the holder's retry goes through and the old token is
// stale from then on.
TEST_F(BarrierTimeoutTest, NewerWriteGivesUpWithoutReachingTheBackend) {
  auto slow = PutHeldAtBackend(gateway_->traffic_port(), "/kv/item/x", "5", 1500, "five");
  ASSERT_TRUE(backend_.WaitForArrived(1, std::chrono::seconds(5)));

  Response held = Put("/kv/item/y", "6", "six");
  EXPECT_EQ(held.result_int(), 503);
  EXPECT_EQ(held[http::field::content_type], "application/problem+json");
  EXPECT_EQ(ProblemReason(held), "barrier_timeout");
  EXPECT_EQ(backend_.Requests().size(), 1u) << "the held write reached the backend";

  std::optional<Response> older = slow.get();
  ASSERT_TRUE(older.has_value());
  EXPECT_EQ(older->result_int(), 200);

  EXPECT_EQ(Put("/kv/item/y", "6", "six again").result_int(), 200);
  EXPECT_EQ(Put("/kv/item/x", "5", "late five").result_int(), 409);
  std::vector<RecordedRequest> seen = backend_.Requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].body_prefix, "six again");

  std::string metrics = FetchMetricsText(gateway_->admin_port());
  EXPECT_EQ(MetricValue(metrics, "fencegate_writes_rejected_total",
                        R"(route="kv",reason="barrier_timeout")"),
            1.0);
}

// A connection keeps one lazily re-armed barrier deadline for all its requests: the wait armed
// for an earlier request (here due 150 ms into the next one's wait) must neither end the next
// request's wait early nor keep it from ending at its own barrier_wait.
TEST_F(BarrierTimeoutTest, EachRequestOnAKeptAliveConnectionWaitsItsOwnBarrierWait) {
  HttpConnection connection;
  ASSERT_TRUE(connection.Connect(gateway_->traffic_port())) << connection.error();
  // An advance: decided after the store's group commit, so it arms the barrier deadline.
  std::optional<Response> first = connection.RoundTrip(
      MakeRequest(http::verb::put, "/kv/item/z", {{"Fencing-Token", "1"}}, "one"));
  ASSERT_TRUE(first.has_value()) << connection.error();
  EXPECT_EQ(first->result_int(), 200);
  const auto first_armed = std::chrono::steady_clock::now();

  auto slow = PutHeldAtBackend(gateway_->traffic_port(), "/kv/item/x", "5", 1500, "five");
  ASSERT_TRUE(backend_.WaitForArrived(2, std::chrono::seconds(5)));
  std::this_thread::sleep_until(first_armed + std::chrono::milliseconds(150));

  const auto sent = std::chrono::steady_clock::now();
  std::optional<Response> held = connection.RoundTrip(
      MakeRequest(http::verb::put, "/kv/item/y", {{"Fencing-Token", "6"}}, "six"));
  const auto waited = std::chrono::steady_clock::now() - sent;
  ASSERT_TRUE(held.has_value()) << connection.error();
  // Not admitted when the held write completed (1.5 s): its own deadline ended the wait.
  EXPECT_EQ(held->result_int(), 503);
  EXPECT_EQ(ProblemReason(*held), "barrier_timeout");
  EXPECT_GE(waited, std::chrono::milliseconds(300)) << "the wait ended at the earlier deadline";
  EXPECT_EQ(backend_.Requests().size(), 2u) << "the held write reached the backend";

  std::optional<Response> older = slow.get();
  ASSERT_TRUE(older.has_value());
  EXPECT_EQ(older->result_int(), 200);
}

class LimitsTest : public HttpGatewayTest {
 protected:
  void CustomizeConfig(GatewayConfig* config) const override {
    (*config)["limits"]["max_header_bytes"] = "2KiB";
    (*config)["limits"]["max_body_bytes"] = "1KiB";
  }
};

TEST_F(LimitsTest, OversizedHeaderIs431) {
  Request request = MakeRequest(http::verb::get, "/kv/a/x", {{"X-Filler", std::string(4096, 'f')}});
  Response response = Send(std::move(request));
  EXPECT_EQ(response.result_int(), 431);
  EXPECT_EQ(response[http::field::content_type], "application/problem+json");
  EXPECT_TRUE(backend_.Requests().empty());
}

TEST_F(LimitsTest, OversizedBodyIs413AndNeverForwarded) {
  Response response = Put("/kv/a/x", "1", std::string(4096, 'b'));
  EXPECT_EQ(response.result_int(), 413);
  EXPECT_EQ(response[http::field::content_type], "application/problem+json");
  EXPECT_TRUE(backend_.Requests().empty()) << ::testing::PrintToString(backend_.Requests());

  // A body within the limit still goes through.
  EXPECT_EQ(Put("/kv/a/x", "1", std::string(512, 'b')).result_int(), 200);
}

using PipeliningTest = HttpGatewayTest;

// Requests sent back to back on one connection are answered in order, each exactly once, and a
// refused write in the middle does not disturb its neighbours.
TEST_F(PipeliningTest, BackToBackRequestsAreAnsweredInOrder) {
  HttpConnection connection;
  ASSERT_TRUE(connection.Connect(gateway_->traffic_port())) << connection.error();
  const std::string requests =
      "PUT /kv/p/x HTTP/1.1\r\nHost: t\r\nFencing-Token: 4\r\nContent-Length: 3\r\n\r\none"
      "PUT /kv/p/x HTTP/1.1\r\nHost: t\r\nFencing-Token: 3\r\nContent-Length: 3\r\n\r\ntwo"
      "GET /kv/p/x HTTP/1.1\r\nHost: t\r\nX-Test-Status: 203\r\n\r\n";
  ASSERT_TRUE(connection.WriteRaw(requests)) << connection.error();

  std::optional<Response> first = connection.ReadResponse();
  std::optional<Response> second = connection.ReadResponse();
  std::optional<Response> third = connection.ReadResponse();
  ASSERT_TRUE(first && second && third) << connection.error();
  EXPECT_EQ(first->result_int(), 200);
  EXPECT_EQ(second->result_int(), 409);
  EXPECT_EQ(third->result_int(), 203);

  std::vector<RecordedRequest> seen = backend_.Requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].body_prefix, "one");
  EXPECT_EQ(seen[1].method, "GET");
}

}  // namespace
}  // namespace fencegate::integration
