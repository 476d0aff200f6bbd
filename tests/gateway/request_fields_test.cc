#include "gateway/http/request_fields.h"

#include <gtest/gtest.h>

namespace fencegate::gateway {
namespace {

namespace http = boost::beast::http;

TEST(RequestFieldsTest, FindsTheFirstOfEachNameAndCountsRepeats) {
  adapters::RequestHeader header;
  header.method(http::verb::put);
  header.target("/kv/a");
  header.insert(http::field::host, "files.example");
  header.insert("fencing-token", "7");  // names compare case-insensitively
  header.insert(http::field::content_type, "text/plain");
  header.insert("X-Request-Id", "abc");
  header.insert(http::field::expect, "100-continue");
  header.insert("Fencing-Token", "8");
  header.insert(http::field::host, "other.example");

  const RequestFields fields = ScanRequestFields(header);

  // The same values Beast's operator[] and count() give, from one walk.
  EXPECT_EQ(fields.host, header[http::field::host]);
  EXPECT_EQ(fields.host, "files.example");
  EXPECT_EQ(fields.host_count, 2u);
  EXPECT_EQ(fields.expect, "100-continue");
  EXPECT_EQ(fields.request_id, "abc");
  EXPECT_EQ(fields.request_id_count, header.count("X-Request-Id"));
  EXPECT_EQ(fields.fencing_token, header[kFencingTokenField]);
  EXPECT_EQ(fields.fencing_token, "7");
  EXPECT_EQ(fields.fencing_token_count, 2u);
}

TEST(RequestFieldsTest, AbsentFieldsAreEmptyWithCountZero) {
  adapters::RequestHeader header;
  header.method(http::verb::get);
  header.target("/");
  header.insert(http::field::accept, "*/*");

  const RequestFields fields = ScanRequestFields(header);

  EXPECT_TRUE(fields.host.empty());
  EXPECT_EQ(fields.host_count, 0u);
  EXPECT_TRUE(fields.expect.empty());
  EXPECT_TRUE(fields.request_id.empty());
  EXPECT_EQ(fields.request_id_count, 0u);
  EXPECT_TRUE(fields.fencing_token.empty());
  EXPECT_EQ(fields.fencing_token_count, 0u);
}

TEST(RequestFieldsTest, FindsUserAgentAndCountsTraceparents) {
  adapters::RequestHeader header;
  header.insert(http::field::user_agent, "curl/8.0");
  header.insert("TraceParent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  header.insert("traceparent", "second");
  const RequestFields fields = ScanRequestFields(header);
  EXPECT_EQ(fields.user_agent, "curl/8.0");
  EXPECT_EQ(fields.traceparent, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  EXPECT_EQ(fields.traceparent_count, 2u);
}

// The loop guard of several replicas reads this count instead of scanning the fields again.
TEST(RequestFieldsTest, CountsFencegateForwardedBy) {
  adapters::RequestHeader header;
  EXPECT_EQ(ScanRequestFields(header).forwarded_by_count, 0u);
  header.insert("fencegate-forwarded-by", "r2");  // names compare case-insensitively
  EXPECT_EQ(ScanRequestFields(header).forwarded_by_count, 1u);
  header.insert(kForwardedByField, "r3");
  EXPECT_EQ(ScanRequestFields(header).forwarded_by_count, 2u);
}

}  // namespace
}  // namespace fencegate::gateway
