#include "gateway/http/problem.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace fencegate::gateway {
namespace {

namespace json = boost::json;

TEST(ProblemTest, RendersRfc9457FieldsAsValidJson) {
  std::string out;
  RenderProblemJson({.status = 404,
                     .slug = "no-route",
                     .title = "No route",
                     .detail = "no route matches",
                     .instance = "/nowhere",
                     .request_id = "abc"},
                    &out);
  const json::object doc = json::parse(out).as_object();
  EXPECT_EQ(doc.at("type").as_string(), "https://fencegate.dev/problems/no-route");
  EXPECT_EQ(doc.at("title").as_string(), "No route");
  EXPECT_EQ(doc.at("status").as_int64(), 404);
  EXPECT_EQ(doc.at("detail").as_string(), "no route matches");
  EXPECT_EQ(doc.at("instance").as_string(), "/nowhere");
  EXPECT_EQ(doc.at("request_id").as_string(), "abc");
  EXPECT_FALSE(doc.contains("fence_key"));
  EXPECT_FALSE(doc.contains("presented_token"));
  EXPECT_FALSE(doc.contains("reason"));
}

TEST(ProblemTest, IncludesFenceFieldsWhenSet) {
  std::string out;
  RenderProblemJson({.status = 409,
                     .slug = "stale-token",
                     .title = "Stale fencing token",
                     .detail = "d",
                     .instance = "/files/a",
                     .request_id = "r",
                     .reason = "stale_token",
                     .fence_key = "files:/files/a",
                     .presented_token = 1,
                     .highest_token = 9223372036854775807ull},
                    &out);
  const json::object doc = json::parse(out).as_object();
  EXPECT_EQ(doc.at("reason").as_string(), "stale_token");
  EXPECT_EQ(doc.at("fence_key").as_string(), "files:/files/a");
  EXPECT_EQ(json::value_to<std::uint64_t>(doc.at("presented_token")), 1u);
  EXPECT_EQ(json::value_to<std::uint64_t>(doc.at("highest_token")), 9223372036854775807ull);
}

TEST(ProblemTest, IncludesStaleReasonAndAuditIdWhenSet) {
  std::string out;
  RenderProblemJson({.status = 409, .slug = "stale-token"}, &out);
  json::object doc = json::parse(out).as_object();
  EXPECT_FALSE(doc.contains("stale_reason"));
  EXPECT_FALSE(doc.contains("audit_id"));
  RenderProblemJson(
      {.status = 409, .slug = "stale-token", .stale_reason = "force-released", .audit_id = 7},
      &out);
  doc = json::parse(out).as_object();
  EXPECT_EQ(doc.at("stale_reason").as_string(), "force-released");
  EXPECT_EQ(json::value_to<std::uint64_t>(doc.at("audit_id")), 7u);
}

TEST(ProblemTest, EscapesUntrustedText) {
  std::string out;
  const std::string instance = std::string("/a\"b\\c\n\x01") + "\xff";
  RenderProblemJson({.status = 400,
                     .slug = "bad\"slug",
                     .title = "t",
                     .detail = "d",
                     .instance = instance,
                     .request_id = "r"},
                    &out);
  const json::object doc = json::parse(out).as_object();
  EXPECT_EQ(doc.at("type").as_string(), "https://fencegate.dev/problems/bad\"slug");
  // Valid UTF-8 round-trips; the invalid byte is escaped as U+00FF rather than breaking JSON.
  EXPECT_EQ(doc.at("instance").as_string(), "/a\"b\\c\n\x01\xc3\xbf");
}

TEST(ProblemTest, ClearsOutputFirst) {
  std::string out = "leftover";
  RenderProblemJson({.status = 500, .slug = "x"}, &out);
  EXPECT_EQ(out.front(), '{');
  EXPECT_NO_THROW(json::parse(out));
}

}  // namespace
}  // namespace fencegate::gateway
