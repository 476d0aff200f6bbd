// The adapter's own requests (LOCK, PROPFIND, PROPPATCH, UNLOCK) reuse idle keep-alive
// connections of their network thread instead of opening one per fenced write. Connections are
// counted in Apache's access log (client port, and %k: requests the connection carried before).
#include <set>

#include <gtest/gtest.h>

#include "tests/support/eventually.h"
#include "tests/support/tcp_connections.h"
#include "tests/webdav/webdav_support.h"

namespace fencegate::webdav_test {
namespace {

namespace http = boost::beast::http;
using integration::EstablishedTcpConnections;
using integration::Eventually;
using integration::MakeRequest;

// The lock sequence's requests (the condition probe's, on scratch resources, are not counted).
bool IsControl(const LogLine& line) {
  if (line.path.starts_with("/dav/.fencegate-probe/")) return false;
  return line.method == "LOCK" || line.method == "UNLOCK" || line.method == "PROPFIND" ||
         line.method == "PROPPATCH";
}

struct Counts {
  int requests = 0;
  int connections = 0;  // control requests that opened their connection (%k == 0)
};
Counts ControlConnections(const std::string& access_log) {
  Counts counts;
  for (const LogLine& line : ReadAccessLog(access_log)) {
    if (!IsControl(line)) continue;
    ++counts.requests;
    if (line.earlier_requests == 0) ++counts.connections;
  }
  return counts;
}

int FencedPuts(std::uint16_t port, const std::string& path, int first_token, int count) {
  integration::HttpConnection client(std::chrono::seconds(60));
  if (!client.Connect(port)) return 0;
  int ok = 0;
  for (int i = 0; i < count; ++i) {
    auto response = client.RoundTrip(MakeRequest(
        http::verb::put, path, {{"Fencing-Token", std::to_string(first_token + i)}}, "body"));
    if (response && (response->result_int() == 201 || response->result_int() == 204)) ++ok;
  }
  return ok;
}

TEST(WebdavConnectionTest, FencedWritesInARowShareOneControlConnection) {
  if (!ApacheAvailable()) GTEST_SKIP() << "apache2 is not installed (scripts/install-deps.sh)";
  std::string error;
  // Apache keeps idle connections open long enough for the whole test, however slow the machine.
  auto apache = ApacheDav::Start(&error, "KeepAliveTimeout 300\nMaxKeepAliveRequests 0\n");
  ASSERT_NE(apache, nullptr) << error;
  YAML::Node idle;
  idle["idle_timeout"] = "300s";
  auto gateway = StartGateway(apache->port(), &error, idle);
  ASSERT_NE(gateway, nullptr) << error;

  constexpr int kWrites = 20;
  // One client connection: every write runs on the same network thread.
  ASSERT_EQ(FencedPuts(gateway->port(), "/dav/row.txt", 1, kWrites), kWrites);
  const Counts counts = ControlConnections(apache->access_log());
  std::cout << kWrites << " fenced writes in a row: " << counts.requests << " control requests on "
            << counts.connections << " connection(s)" << std::endl;
  EXPECT_GE(counts.requests, 4 * kWrites);
  EXPECT_EQ(counts.connections, 1);
}

// Apache closes idle connections after one second and after three requests on one connection
// (it says so with Connection: close); the gateway keeps neither and every write succeeds.
TEST(WebdavConnectionTest, ConnectionsTheServerClosedAreNotReused) {
  if (!ApacheAvailable()) GTEST_SKIP() << "apache2 is not installed (scripts/install-deps.sh)";
  std::string error;
  auto apache = ApacheDav::Start(&error, "KeepAliveTimeout 1\nMaxKeepAliveRequests 3\n");
  ASSERT_NE(apache, nullptr) << error;
  auto gateway = StartGateway(apache->port(), &error);
  ASSERT_NE(gateway, nullptr) << error;

  ASSERT_EQ(FencedPuts(gateway->port(), "/dav/short.txt", 1, 5), 5);
  // Apache takes 3 more requests after a connection's first, then closes it: the gateway
  // needed several connections, and every request was answered (no write failed).
  int connections = 0;
  for (const LogLine& line : ReadAccessLog(apache->access_log())) {
    EXPECT_LE(line.earlier_requests, 3u) << line.method << " " << line.path;
    if (IsControl(line) && line.earlier_requests == 0) ++connections;
  }
  EXPECT_GE(connections, 5);
  // Idle past Apache's keep-alive timeout (the clock is the subject): wait until Apache closed
  // the connections the gateway pooled, as the kernel reports them, before writing again.
  ASSERT_TRUE(Eventually([&] { return EstablishedTcpConnections(apache->port()) == 0; }));
  EXPECT_EQ(FencedPuts(gateway->port(), "/dav/short.txt", 6, 3), 3);
  EXPECT_EQ(Send(apache->port(), MakeRequest(http::verb::get, "/dav/short.txt")).body(), "body");
  EXPECT_EQ(StoredToken(apache->port(), "/dav/short.txt"), 8u);
}

}  // namespace
}  // namespace fencegate::webdav_test
