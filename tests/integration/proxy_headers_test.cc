#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/integration/http_gateway_fixture.h"

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

class ForwardTokenTest : public HttpGatewayTest {
 protected:
  void CustomizeConfig(HttpBackendConfigOptions* options) const override {
    options->extra_backend_keys = "    forward_token_header: Fencing-Token\n";
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
