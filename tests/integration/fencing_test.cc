#include <string>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

#include "tests/support/http_gateway_fixture.h"

namespace fencegate::integration {
namespace {

using FencingTest = HttpGatewayTest;

TEST_F(FencingTest, AdmitsNewerTokenRefusesStaleAdmitsEqual) {
  Response admitted = Put("/kv/a/doc", "2");
  EXPECT_EQ(admitted.result_int(), 200);
  ASSERT_TRUE(backend_.WaitForCompleted(1, std::chrono::seconds(5)));

  Response stale = Put("/kv/a/doc", "1");
  EXPECT_EQ(stale.result_int(), 409);
  EXPECT_EQ(stale[http::field::content_type], "application/problem+json");
  boost::json::object problem = boost::json::parse(stale.body()).as_object();
  EXPECT_EQ(problem.at("status").to_number<int>(), 409);
  EXPECT_EQ(problem.at("fence_key").as_string(), "kv:a");
  EXPECT_EQ(problem.at("presented_token").to_number<std::uint64_t>(), 1u);
  EXPECT_EQ(problem.at("highest_token").to_number<std::uint64_t>(), 2u);

  // Another path under the same fence is stale too; another fence is independent.
  EXPECT_EQ(Put("/kv/a/other", "1").result_int(), 409);
  EXPECT_EQ(Put("/kv/b/doc", "1").result_int(), 200);

  Response again = Put("/kv/a/doc", "2");
  EXPECT_EQ(again.result_int(), 200);

  ASSERT_TRUE(backend_.WaitForCompleted(3, std::chrono::seconds(5)));
  std::vector<RecordedRequest> seen = backend_.Requests();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].target, "/kv/a/doc");
  EXPECT_EQ(seen[1].target, "/kv/b/doc");
  EXPECT_EQ(seen[2].target, "/kv/a/doc");
  for (const RecordedRequest& request : seen) EXPECT_EQ(request.body_prefix, "data");
}

TEST_F(FencingTest, MissingTokenIs428AndNeverForwarded) {
  Response response = Put("/kv/a/doc", std::nullopt);
  EXPECT_EQ(response.result_int(), 428);
  EXPECT_EQ(response[http::field::content_type], "application/problem+json");
  // Reads are not fenced by default.
  EXPECT_EQ(Send(MakeRequest(http::verb::get, "/kv/a/doc")).result_int(), 200);
  ASSERT_TRUE(backend_.WaitForCompleted(1, std::chrono::seconds(5)));
  std::vector<RecordedRequest> seen = backend_.Requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "GET");
}

TEST_F(FencingTest, MalformedTokensAre400AndNeverForwarded) {
  for (const char* bad : {"-1", "0x1", "1 2", "1,2", "9223372036854775808", "", "abc", "+1"}) {
    Response response = Put("/kv/a/doc", std::string(bad));
    EXPECT_EQ(response.result_int(), 400) << "token '" << bad << "'";
  }
  Request repeated = MakeRequest(http::verb::put, "/kv/a/doc",
                                 {{"Fencing-Token", "1"}, {"Fencing-Token", "2"}}, "x");
  EXPECT_EQ(Send(std::move(repeated)).result_int(), 400);
  // The largest valid token is admitted; the gateway still forwards after all those refusals.
  EXPECT_EQ(Put("/kv/a/doc", "9223372036854775807").result_int(), 200);
  ASSERT_TRUE(backend_.WaitForCompleted(1, std::chrono::seconds(5)));
  EXPECT_EQ(backend_.Requests().size(), 1u);
}

class FencedReadsTest : public HttpGatewayTest {
 protected:
  void CustomizeConfig(GatewayConfig* config) const override {
    config->Route("kv")["fence_reads"] = true;
    config->Route("kv")["fenced_methods"].push_back("PUT");
  }
};

// A route with fence_reads needs a current token on every request, reads included, whatever
// fenced_methods lists.
TEST_F(FencedReadsTest, ReadsNeedAToken) {
  EXPECT_EQ(Send(MakeRequest(http::verb::get, "/kv/r/x")).result_int(), 428);
  EXPECT_EQ(Put("/kv/r/x", "5").result_int(), 200);
  EXPECT_EQ(Send(MakeRequest(http::verb::get, "/kv/r/x", {{"Fencing-Token", "5"}})).result_int(),
            200);
  EXPECT_EQ(Send(MakeRequest(http::verb::get, "/kv/r/x", {{"Fencing-Token", "4"}})).result_int(),
            409);
  EXPECT_EQ(Send(MakeRequest(http::verb::post, "/kv/r/x", {}, "unfenced")).result_int(), 428)
      << "fence_reads fences every method";

  std::vector<RecordedRequest> seen = backend_.Requests();
  ASSERT_EQ(seen.size(), 2u) << ::testing::PrintToString(seen);
  EXPECT_EQ(seen[0].method, "PUT");
  EXPECT_EQ(seen[1].method, "GET");
}

}  // namespace
}  // namespace fencegate::integration
