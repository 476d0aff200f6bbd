// Bad input rows of docs/BAD_INPUT.md for request paths on the http adapter (traversal, encoded
// traversal, NUL, encoded '/': refused before routing; other spellings are made canonical) and for
// empty and 10 KB tokens, through the real binary. "Never forwarded" is checked against the
// recording backend.
#include <string>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

#include "tests/support/http_gateway_fixture.h"

namespace fencegate::integration {
namespace {

using BadPathTest = HttpGatewayTest;
using BadTokenTest = HttpGatewayTest;

void ExpectProblem(const Response& response, unsigned status, const std::string& type_suffix,
                   const std::string& context) {
  EXPECT_EQ(response.result_int(), status) << context << ": " << response.body();
  EXPECT_EQ(response[http::field::content_type], "application/problem+json") << context;
  const boost::json::object problem = boost::json::parse(response.body()).as_object();
  EXPECT_TRUE(std::string(problem.at("type").as_string()).ends_with(type_suffix))
      << context << ": " << response.body();
}

TEST_F(BadPathTest, TraversalNulAndEncodedSlashesAre400AndNeverForwarded) {
  for (const char* target : {
           "/kv/../admin",           // leaves the route's prefix
           "/kv/a/../b/x",           // fence "kv:a", resource /kv/b/x at a normalising backend
           "/kv/./a/x",              //
           "/kv/%2e%2e/x",           // encoded traversal
           "/kv/%2E%2E/x",           //
           "/kv/.%2e/x",             //
           "/kv/a/%2e%2e/%2e%2e/x",  //
           "/kv/a%00b/x",            // NUL
           "/kv/a%zz/x",             // broken escape
           "/kv/a%2fb/x",            // encoded '/': backends disagree on whether it splits
           "/kv/a%2Fb/x",            //
       }) {
    ExpectProblem(Put(target, "1"), 400, "bad-path", std::string("PUT ") + target);
    ExpectProblem(Send(MakeRequest(http::verb::get, target)), 400, "bad-path",
                  std::string("GET ") + target);
  }
  EXPECT_TRUE(backend_.Requests().empty()) << "a refused path reached the backend";

  // What the http adapter forwards: the canonical target (gateway/http/path_canonical.h), the query
  // as sent. An encoded '?' stays encoded (the fence key is "kv:a%3Fb"), "%61" is "a", and dots
  // inside a name are just a name.
  EXPECT_EQ(Put("/kv/a%3fb/x?q=%2e%2e", "1").result_int(), 200);
  EXPECT_EQ(Put("/kv/...x/a.b", "1").result_int(), 200);
  EXPECT_EQ(Put("/kv/%61/x", "1").result_int(), 200);
  ASSERT_TRUE(backend_.WaitForCompleted(3, std::chrono::seconds(5)));
  const std::vector<RecordedRequest> seen = backend_.Requests();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].target, "/kv/a%3Fb/x?q=%2e%2e");
  EXPECT_EQ(seen[1].target, "/kv/...x/a.b");
  EXPECT_EQ(seen[2].target, "/kv/a/x");
}

TEST_F(BadTokenTest, EmptyAndTenKilobyteTokensAre400AndNeverForwarded) {
  const std::string ten_kb_digits(10 * 1024, '9');  // overflows
  const std::string ten_kb_letters(10 * 1024, 'x');
  const std::string ten_kb_spaced = std::string(5 * 1024, '1') + " " + std::string(5 * 1024, '1');
  for (const std::string& token :
       {std::string(), std::string("  "), ten_kb_digits, ten_kb_letters, ten_kb_spaced}) {
    ExpectProblem(Put("/kv/a/doc", token), 400, "invalid-token",
                  "token of " + std::to_string(token.size()) + " bytes");
  }
  EXPECT_TRUE(backend_.Requests().empty()) << "a write with a bad token reached the backend";

  // Length alone is no reason to refuse: 10 KB of leading zeros and a digit is that digit's token
  // (the grammar allows leading zeros), and it fences like any other.
  const std::string ten_kb_seven = std::string(10 * 1024 - 1, '0') + "7";
  EXPECT_EQ(Put("/kv/a/doc", ten_kb_seven).result_int(), 200);
  Response stale = Put("/kv/a/doc", "6");
  ExpectProblem(stale, 409, "stale-token", "token 6 after 7");
  EXPECT_EQ(boost::json::parse(stale.body()).at("highest_token").to_number<std::uint64_t>(), 7u);
  ASSERT_TRUE(backend_.WaitForCompleted(1, std::chrono::seconds(5)));
  EXPECT_EQ(backend_.Requests().size(), 1u);
}

}  // namespace
}  // namespace fencegate::integration
