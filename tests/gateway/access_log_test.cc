#include "gateway/observability/access_log.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "base/encoding/json_escape.h"

namespace fencegate::gateway {
namespace {

namespace json = boost::json;

AccessLogEntry SampleEntry() {
  AccessLogEntry entry;
  entry.time_ms = 1764670620123;  // 2025-12-02T10:17:00.123Z
  entry.request_id = "req-1";
  entry.route = "files";
  entry.method = "PUT";
  entry.path = "/files/a";
  entry.status = 409;
  entry.fence_key = "files:/files/a";
  entry.presented_token = 1;
  entry.highest_token = 2;
  entry.outcome = "stale_token";
  entry.duration_ms = 1.5;
  entry.barrier_wait_ms = 0.25;
  entry.bytes_in = 10;
  entry.bytes_out = 20;
  entry.client = "127.0.0.1";
  return entry;
}

TEST(AccessLogTest, FormatsOneJsonObjectPerLine) {
  std::string line;
  FormatAccessLogLine(SampleEntry(), &line);
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  const json::object doc = json::parse(line).as_object();
  EXPECT_EQ(doc.at("time").as_string(), "2025-12-02T10:17:00.123Z");
  EXPECT_EQ(doc.at("request_id").as_string(), "req-1");
  EXPECT_EQ(doc.at("route").as_string(), "files");
  EXPECT_EQ(doc.at("method").as_string(), "PUT");
  EXPECT_EQ(doc.at("path").as_string(), "/files/a");
  EXPECT_EQ(doc.at("status").as_int64(), 409);
  EXPECT_EQ(doc.at("fence_key").as_string(), "files:/files/a");
  EXPECT_EQ(doc.at("presented_token").as_int64(), 1);
  EXPECT_EQ(doc.at("highest_token").as_int64(), 2);
  EXPECT_EQ(doc.at("outcome").as_string(), "stale_token");
  EXPECT_EQ(doc.at("upstream_status").as_int64(), 0);
  EXPECT_DOUBLE_EQ(doc.at("duration_ms").to_number<double>(), 1.5);
  EXPECT_DOUBLE_EQ(doc.at("barrier_wait_ms").to_number<double>(), 0.25);
  EXPECT_EQ(doc.at("bytes_in").as_int64(), 10);
  EXPECT_EQ(doc.at("bytes_out").as_int64(), 20);
  EXPECT_EQ(doc.at("client").as_string(), "127.0.0.1");
  EXPECT_EQ(doc.at("user_agent").as_string(), "");
  EXPECT_EQ(doc.at("principal").as_string(), "");
  EXPECT_EQ(doc.at("refusal").as_string(), "");
  EXPECT_EQ(doc.at("trace_id").as_string(), "");
}

TEST(AccessLogTest, CarriesUserAgentPrincipalRefusalAndTraceId) {
  AccessLogEntry entry = SampleEntry();
  const std::string agent = "curl/8.0 \"quoted\"\n";
  entry.user_agent = agent;
  entry.principal = "deployer";
  entry.refusal = "stale-token";
  entry.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  std::string line;
  FormatAccessLogLine(entry, &line);
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  const json::object doc = json::parse(line).as_object();
  EXPECT_EQ(doc.at("user_agent").as_string(), agent);
  EXPECT_EQ(doc.at("principal").as_string(), "deployer");
  EXPECT_EQ(doc.at("refusal").as_string(), "stale-token");
  EXPECT_EQ(doc.at("trace_id").as_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
}

TEST(AccessLogTest, CarriesStaleReasonOnlyWhenSet) {
  std::string line;
  FormatAccessLogLine(SampleEntry(), &line);
  EXPECT_FALSE(json::parse(line).as_object().contains("stale_reason"));
  AccessLogEntry entry = SampleEntry();
  entry.stale_reason = "lease-expired";
  line.clear();
  FormatAccessLogLine(entry, &line);
  EXPECT_EQ(json::parse(line).as_object().at("stale_reason").as_string(), "lease-expired");
}

TEST(AccessLogTest, AbsentTokensAreNull) {
  AccessLogEntry entry = SampleEntry();
  entry.presented_token.reset();
  entry.highest_token.reset();
  std::string line;
  FormatAccessLogLine(entry, &line);
  const json::object doc = json::parse(line).as_object();
  EXPECT_TRUE(doc.at("presented_token").is_null());
  EXPECT_TRUE(doc.at("highest_token").is_null());
}

TEST(AccessLogTest, EscapesHostileStringsSoEachRecordStaysOneLine) {
  AccessLogEntry entry = SampleEntry();
  const std::string path = "/files/a\"}\n{\"forged\":true\\\x1f\x7f\xc3\xa9\xfe";
  entry.path = path;
  std::string line;
  FormatAccessLogLine(entry, &line);
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  const json::object doc = json::parse(line).as_object();
  EXPECT_EQ(doc.at("path").as_string(), "/files/a\"}\n{\"forged\":true\\\x1f\x7f\xc3\xa9\xc3\xbe");
  EXPECT_FALSE(doc.contains("forged"));
}

TEST(JsonEscapeTest, EscapesControlQuoteBackslash) {
  std::string out;
  AppendJsonString("a\"b\\c\r\n\t\x02", &out);
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\r\\n\\t\\u0002\"");
}

TEST(JsonEscapeTest, RejectsOverlongAndSurrogateUtf8) {
  std::string out;
  AppendJsonEscaped("\xc0\xaf\xed\xa0\x80", &out);  // overlong '/', UTF-16 surrogate
  EXPECT_EQ(out, "\\u00c0\\u00af\\u00ed\\u00a0\\u0080");
}

TEST(AccessLogTest, AppendsLinesToFile) {
  char path[] = "/tmp/fencegate-access-log-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    std::unique_ptr<AccessLog> log;
    ASSERT_TRUE(AccessLog::Open(path, &log).ok());
    ASSERT_TRUE(log->enabled());
    log->Write(SampleEntry());
    log->Write(SampleEntry());
  }
  std::ifstream in(path);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    EXPECT_NO_THROW(json::parse(line));
    ++lines;
  }
  EXPECT_EQ(lines, 2);
  std::remove(path);
}

TEST(AccessLogTest, EmptyPathDisablesLogging) {
  std::unique_ptr<AccessLog> log;
  ASSERT_TRUE(AccessLog::Open("", &log).ok());
  EXPECT_FALSE(log->enabled());
}

TEST(AccessLogTest, UnwritablePathIsAnError) {
  std::unique_ptr<AccessLog> log;
  EXPECT_FALSE(AccessLog::Open("/nonexistent-dir/x/access.log", &log).ok());
}

}  // namespace
}  // namespace fencegate::gateway
