// A flood of stale writes through the real binary (README "Refused writes under a flood"):
// memory stays bounded, every refusal's audit record is written or counted as dropped, the
// access log holds back repeated lines of one client and key and reports how many, and writes
// on another key keep getting their answers meanwhile.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <boost/json.hpp>

#include "tests/support/admin_client.h"
#include "tests/support/http_gateway_fixture.h"

namespace fencegate::integration {
namespace {

using Clock = std::chrono::steady_clock;

// The flood is bounded by count and by time, whichever ends it first.
constexpr std::size_t kFloodConnections = 3;
constexpr std::size_t kFloodRequests = 200'000;
constexpr auto kFloodTime = std::chrono::seconds(20);
constexpr std::size_t kPipelineDepth = 16;  // requests written at once on a connection
// The flooded resource: a long path (one fence key, kv:flood) makes each refusal's audit record
// and access-log line about 3 KB, as a client that wants to hurt would send.
const std::string kFloodTarget = "/kv/flood/" + std::string(3000, 'p');
// The gateway's peak resident memory must stay under this. Before audit records had a bounded
// queue of their own, this flood took the gateway to 941 MB (VmHWM; 64 MB after).
constexpr std::uint64_t kMaxPeakRssKb = 160 * 1024;

// A field of /proc/PID/status in kB ("VmRSS", "VmHWM"); 0 when absent.
std::uint64_t ProcStatusKb(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(field.size() + 1));
    std::uint64_t kb = 0;
    fields >> kb;
    return kb;
  }
  return 0;
}

// What the access log says about one fence key: its lines, and the held-back lines they report.
struct KeyLines {
  std::uint64_t lines = 0;
  std::uint64_t reported_suppressed = 0;
};
KeyLines CountKeyLines(const std::string& path, const std::string& fence_key) {
  KeyLines out;
  std::ifstream log(path);
  std::string line;
  while (std::getline(log, line)) {
    boost::system::error_code ec;
    const boost::json::value parsed = boost::json::parse(line, ec);
    if (ec || !parsed.is_object()) continue;
    const boost::json::object& entry = parsed.as_object();
    const auto* key = entry.if_contains("fence_key");
    if (key == nullptr || !key->is_string() || key->as_string() != fence_key) continue;
    ++out.lines;
    if (const auto* suppressed = entry.if_contains("suppressed")) {
      out.reported_suppressed += suppressed->to_number<std::uint64_t>();
    }
  }
  return out;
}

// One flooding connection: writes kPipelineDepth requests at once, then reads their responses,
// until `requests` were answered or `end`. Responses are counted by their status lines, not
// parsed (the gateway's problem+json bodies hold no "HTTP/1.1 "), so that the client spends its
// CPU share sending, not parsing.
struct FloodCount {
  std::uint64_t refused = 0;     // 409
  std::uint64_t unexpected = 0;  // any other status, or the connection failed
};
FloodCount FloodConnection(std::uint16_t port, const std::string& batch, std::size_t requests,
                           Clock::time_point end) {
  FloodCount count;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const timeval timeout{.tv_sec = 30, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return {.unexpected = 1};
  }
  static constexpr std::string_view kStatusLine = "HTTP/1.1 ";
  std::string pending;
  char buffer[64 * 1024];
  for (std::size_t sent = 0; sent < requests && Clock::now() < end; sent += kPipelineDepth) {
    for (std::size_t written = 0; written < batch.size();) {
      const ssize_t n = ::send(fd, batch.data() + written, batch.size() - written, MSG_NOSIGNAL);
      if (n <= 0) {
        ::close(fd);
        ++count.unexpected;
        return count;
      }
      written += static_cast<std::size_t>(n);
    }
    for (std::size_t answered = 0; answered < kPipelineDepth;) {
      const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) {
        ::close(fd);
        ++count.unexpected;
        return count;
      }
      pending.append(buffer, static_cast<std::size_t>(n));
      std::size_t at = 0;
      while ((at = pending.find(kStatusLine, at)) != std::string::npos &&
             at + kStatusLine.size() + 3 <= pending.size()) {
        ++(pending.compare(at + kStatusLine.size(), 3, "409") == 0 ? count.refused
                                                                   : count.unexpected);
        ++answered;
        at += kStatusLine.size() + 3;
      }
      // Keep what may be the start of a status line cut by the read.
      const std::size_t keep = at != std::string::npos
                                   ? pending.size() - at
                                   : std::min(pending.size(), kStatusLine.size() + 2);
      pending.erase(0, pending.size() - keep);
    }
  }
  ::close(fd);
  return count;
}

double Metric(std::uint16_t admin_port, std::string_view name) {
  return MetricValue(FetchMetricsText(admin_port), name, "").value_or(-1);
}

class FloodTest : public HttpGatewayTest {};

TEST_F(FloodTest, StaleWriteFloodKeepsMemoryBoundedAndOtherKeysAnswered) {
  ASSERT_EQ(Put(kFloodTarget, "100").result_int(), 200);
  const pid_t pid = gateway_->process().pid();
  const std::uint64_t rss_before_kb = ProcStatusKb(pid, "VmRSS");

  std::string request;
  for (std::size_t i = 0; i < kPipelineDepth; ++i) {
    request += "PUT " + kFloodTarget +
               " HTTP/1.1\r\nHost: gateway\r\nFencing-Token: 5\r\nContent-Length: 0\r\n\r\n";
  }
  const auto flood_end = Clock::now() + kFloodTime;
  std::atomic<std::uint64_t> refused{0};
  std::atomic<std::uint64_t> unexpected{0};
  std::atomic<std::size_t> flooders_done{0};
  std::vector<std::thread> flooders;
  for (std::size_t c = 0; c < kFloodConnections; ++c) {
    flooders.emplace_back([&] {
      const FloodCount count = FloodConnection(gateway_->traffic_port(), request,
                                               kFloodRequests / kFloodConnections, flood_end);
      refused += count.refused;
      unexpected += count.unexpected;
      ++flooders_done;
    });
  }

  // Writes on another key while the flood runs: each needs its own fence advance.
  std::vector<double> other_ms;
  std::uint64_t peak_rss_kb = 0;
  for (std::uint64_t token = 1; flooders_done < kFloodConnections; ++token) {
    const auto start = Clock::now();
    const Response response = Put("/kv/other/doc", std::to_string(token));
    other_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    EXPECT_EQ(response.result_int(), 200) << "write " << token << " on another key";
    peak_rss_kb = std::max(peak_rss_kb, ProcStatusKb(pid, "VmRSS"));
  }
  for (std::thread& flooder : flooders) flooder.join();
  const std::uint64_t hwm_kb = ProcStatusKb(pid, "VmHWM");

  EXPECT_EQ(unexpected.load(), 0u);
  ASSERT_GT(refused.load(), kPipelineDepth);
  std::sort(other_ms.begin(), other_ms.end());
  const auto percentile = [&](double p) {
    return other_ms[static_cast<std::size_t>(p * static_cast<double>(other_ms.size() - 1))];
  };
  ASSERT_FALSE(other_ms.empty());
  std::printf(
      "flood: %llu stale writes refused over %zu connections; RSS %llu kB before, %llu kB "
      "peak seen, VmHWM %llu kB; %zu writes on another key: p50 %.1f ms, p99 %.1f ms, "
      "max %.1f ms\n",
      static_cast<unsigned long long>(refused.load()), kFloodConnections,
      static_cast<unsigned long long>(rss_before_kb), static_cast<unsigned long long>(peak_rss_kb),
      static_cast<unsigned long long>(hwm_kb), other_ms.size(), percentile(0.5), percentile(0.99),
      other_ms.back());
  EXPECT_LT(hwm_kb, kMaxPeakRssKb);

  // Every refusal's audit record is written or counted as dropped, once the writer caught up.
  const std::uint16_t admin = gateway_->admin_port();
  double written = 0;
  double dropped = 0;
  const auto settle_end = Clock::now() + std::chrono::seconds(20);
  do {
    written = Metric(admin, "fencegate_store_rejections_written_total");
    dropped = Metric(admin, "fencegate_store_rejections_dropped_total");
  } while (written + dropped < static_cast<double>(refused) && Clock::now() < settle_end);
  EXPECT_EQ(written + dropped, static_cast<double>(refused.load()))
      << "written " << written << ", dropped " << dropped;
  std::printf("flood: audit records written %.0f, dropped %.0f\n", written, dropped);

  // The trail still holds what was written, newest first.
  std::string error;
  const std::optional<boost::json::value> trail =
      FetchAdminJson(admin, "/admin/rejections?limit=5", &error);
  ASSERT_TRUE(trail.has_value()) << error;
  const boost::json::array& records = trail->at("rejections").as_array();
  ASSERT_FALSE(records.empty());
  const boost::json::object& newest = records[0].as_object();
  EXPECT_EQ(newest.at("fence_key").as_string(), "kv:flood");
  EXPECT_EQ(newest.at("reason").as_string(), "stale_token");

  // The access log: a few lines a second for the flooded key, the rest counted. One more
  // refusal at a time until a line reports what was held back (the first of a new second does).
  const std::string log_path = dir_.Join("access.log");
  KeyLines flood_lines;
  std::uint64_t extra = 0;
  do {
    EXPECT_EQ(Put(kFloodTarget, "5").result_int(), 409);
    ++extra;
    flood_lines = CountKeyLines(log_path, "kv:flood");
  } while (flood_lines.reported_suppressed == 0 && Clock::now() < settle_end + kFloodTime);
  // The first admitted write's line plus the refusals: each either logged or held back, once
  // the last lines are written (a line follows its response).
  const double expected_lines = static_cast<double>(refused.load() + extra + 1);
  double suppressed = 0;
  do {
    flood_lines = CountKeyLines(log_path, "kv:flood");
    suppressed = Metric(admin, "fencegate_access_log_suppressed_total");
  } while (static_cast<double>(flood_lines.lines) + suppressed < expected_lines &&
           Clock::now() < settle_end + kFloodTime);
  std::printf("flood: access log %llu lines for the flooded key, %.0f held back (%llu reported)\n",
              static_cast<unsigned long long>(flood_lines.lines), suppressed,
              static_cast<unsigned long long>(flood_lines.reported_suppressed));
  EXPECT_GT(flood_lines.reported_suppressed, 0u);
  EXPECT_LE(flood_lines.reported_suppressed, static_cast<std::uint64_t>(suppressed));
  EXPECT_EQ(static_cast<double>(flood_lines.lines) + suppressed, expected_lines);
  EXPECT_LT(flood_lines.lines * 100, refused.load()) << "the access log was not capped";
}

}  // namespace
}  // namespace fencegate::integration
