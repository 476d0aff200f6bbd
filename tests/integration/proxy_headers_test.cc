#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/http_gateway_fixture.h"

namespace fencegate::integration {
namespace {

using ProxyHeadersTest = HttpGatewayTest;

TEST_F(ProxyHeadersTest, ForwardingFieldsAndNoTokenUpstream) {
  Response response = Put("/kv/h/x", "3");
  ASSERT_EQ(response.result_int(), 200);
  ASSERT_TRUE(backend_.WaitForCompleted(1, std::chrono::seconds(5)));
  const std::vector<RecordedRequest> seen = backend_.Requests();
  const http::fields& upstream = seen.at(0).headers;
  EXPECT_NE(upstream["Via"].find("fencegate"), std::string::npos) << upstream["Via"];
  EXPECT_NE(upstream["X-Forwarded-For"].find("127.0.0.1"), std::string::npos);
  EXPECT_NE(upstream["Forwarded"].find("for="), std::string::npos) << upstream["Forwarded"];
  EXPECT_EQ(upstream.count("Fencing-Token"), 0u);
  // A generated request id is the same upstream and in the response.
  EXPECT_FALSE(response["X-Request-Id"].empty());
  EXPECT_EQ(upstream["X-Request-Id"], response["X-Request-Id"]);
}

TEST_F(ProxyHeadersTest, ClientRequestIdPassesThrough) {
  Response response =
      Send(MakeRequest(http::verb::get, "/kv/h/x", {{"X-Request-Id", "client-id-0123"}}));
  ASSERT_EQ(response.result_int(), 200);
  EXPECT_EQ(response["X-Request-Id"], "client-id-0123");
  ASSERT_TRUE(backend_.WaitForCompleted(1, std::chrono::seconds(5)));
  EXPECT_EQ(backend_.Requests().at(0).headers["X-Request-Id"], "client-id-0123");
}

// Persistence follows the client's version and Connection field, and the response says so
// only where it differs from the version's default (RFC 9112 9.3).
TEST_F(ProxyHeadersTest, ConnectionFieldFollowsTheClientsVersionAndChoice) {
  HttpConnection connection;
  ASSERT_TRUE(connection.Connect(gateway_->traffic_port())) << connection.error();
  Request keep_10 = MakeRequest(http::verb::get, "/kv/c/x", {{"Connection", "keep-alive"}});
  keep_10.version(10);
  std::optional<Response> response = connection.RoundTrip(keep_10);
  ASSERT_TRUE(response) << connection.error();
  EXPECT_EQ(response->result_int(), 200);
  EXPECT_EQ((*response)[http::field::connection], "keep-alive");
  // Still open: HTTP/1.1 on the same connection, persistent by default, no field needed.
  response = connection.RoundTrip(MakeRequest(http::verb::get, "/kv/c/x"));
  ASSERT_TRUE(response) << connection.error();
  EXPECT_EQ(response->result_int(), 200);
  EXPECT_EQ(response->count(http::field::connection), 0u);
  // HTTP/1.1 asking to close: "close", then the gateway closes.
  response =
      connection.RoundTrip(MakeRequest(http::verb::get, "/kv/c/x", {{"Connection", "close"}}));
  ASSERT_TRUE(response) << connection.error();
  EXPECT_EQ((*response)[http::field::connection], "close");
  EXPECT_EQ(connection.ReadUntilClose(), "");

  // HTTP/1.0 without keep-alive: no field (closing is its default), and closed.
  HttpConnection plain_10;
  ASSERT_TRUE(plain_10.Connect(gateway_->traffic_port())) << plain_10.error();
  Request close_10 = MakeRequest(http::verb::get, "/kv/c/x");
  close_10.version(10);
  response = plain_10.RoundTrip(close_10);
  ASSERT_TRUE(response) << plain_10.error();
  EXPECT_EQ(response->result_int(), 200);
  EXPECT_EQ(response->count(http::field::connection), 0u);
  EXPECT_EQ(plain_10.ReadUntilClose(), "");
}

// The client gets the request's id, once, whatever id the backend's answer carries.
TEST_F(ProxyHeadersTest, TheBackendsRequestIdIsReplacedByTheRequests) {
  Response response = Send(MakeRequest(
      http::verb::get, "/kv/h/x",
      {{"X-Request-Id", "client-id-0456"}, {"X-Test-Response-Request-Id", "backend-made-this"}}));
  ASSERT_EQ(response.result_int(), 200);
  EXPECT_EQ(response.count("X-Request-Id"), 1u);
  EXPECT_EQ(response["X-Request-Id"], "client-id-0456");
}

class ForwardTokenTest : public HttpGatewayTest {
 protected:
  void CustomizeConfig(GatewayConfig* config) const override {
    config->Backend("api")["forward_token_header"] = "Fencing-Token";
  }
};

TEST_F(ForwardTokenTest, AdmittedTokenIsForwardedWhenConfigured) {
  ASSERT_EQ(Put("/kv/t/x", "00017").result_int(), 200);
  ASSERT_TRUE(backend_.WaitForCompleted(1, std::chrono::seconds(5)));
  const std::vector<RecordedRequest> seen = backend_.Requests();
  const http::fields& upstream = seen.at(0).headers;
  EXPECT_EQ(upstream.count("Fencing-Token"), 1u);
  EXPECT_EQ(upstream["Fencing-Token"], "17");
}

}  // namespace
}  // namespace fencegate::integration
