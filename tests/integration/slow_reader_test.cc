// Bad input row "a client that stops reading its response" (docs/BAD_INPUT.md): the gateway cuts
// such a client after timeouts.response_write, frees the connection and whatever it was reading
// from (a file, an upstream connection), and serves every other client meanwhile.
#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include "tests/support/admin_client.h"
#include "tests/support/eventually.h"
#include "tests/support/fencegate_run.h"
#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/temp_dir.h"

namespace fencegate::integration {
namespace {

namespace fs = std::filesystem;
namespace asio = boost::asio;
using asio::ip::tcp;

// Far more than every socket buffer on the way (client, gateway, upstream) can hold, so a client
// that does not read stalls the gateway's writes.
constexpr std::uint64_t kBigBodyBytes = 64ull << 20;
constexpr const char* kResponseWrite = "1s";

// A client that sends one GET and then does not read. Its receive buffer is made small before
// connecting, so the gateway's writes stall quickly.
class StalledReader {
 public:
  bool Start(std::uint16_t port, const std::string& target) {
    boost::system::error_code ec;
    socket_.open(tcp::v4(), ec);
    if (ec) return false;
    socket_.set_option(asio::socket_base::receive_buffer_size(4096), ec);
    socket_.connect({asio::ip::make_address("127.0.0.1"), port}, ec);
    if (ec) return false;
    const std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    asio::write(socket_, asio::buffer(request), ec);
    return !ec;
  }

  // Reads everything that is still delivered until the gateway's close (or 10 s of silence).
  std::uint64_t DrainUntilClosed() {
    timeval timeout{10, 0};
    ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    std::uint64_t total = 0;
    char buffer[64 * 1024];
    boost::system::error_code ec;
    while (!ec) total += socket_.read_some(asio::buffer(buffer), ec);
    closed_by_peer_ = ec == asio::error::eof || ec == asio::error::connection_reset;
    return total;
  }
  bool closed_by_peer() const { return closed_by_peer_; }

 private:
  asio::io_context io_;
  tcp::socket socket_{io_};
  bool closed_by_peer_ = false;
};

std::optional<double> ConnectionsOpen(std::uint16_t admin_port) {
  return MetricValue(FetchMetricsText(admin_port), "fencegate_connections_open", "");
}

TEST(SlowReaderTest, FilesystemClientThatStopsReadingIsCutAndOthersAreServed) {
  TempDir dir;
  fs::create_directories(dir.Join("data/files"));
  {
    std::ofstream big(dir.Join("data/files/big.bin"), std::ios::binary);
    const std::string mib(1 << 20, 'b');
    for (std::uint64_t i = 0; i < (kBigBodyBytes >> 20); ++i) big << mib;
  }
  std::ofstream(dir.Join("data/files/small.txt")) << "small";
  GatewayConfig config =
      GatewayConfig::FromFile(std::string(FENCEGATE_SOURCE_DIR) + "/config/fencegate.yaml");
  config["timeouts"]["response_write"] = kResponseWrite;
  const std::string config_path = dir.WriteFile("fencegate.yaml", config.Yaml());
  // The data dir already serves files: its first fence store is made by an explicit init.
  const Finished init =
      RunFencegate({"store", "init", "--config", config_path, "--data-dir", dir.Join("data")});
  ASSERT_EQ(init.status, 0) << init.stderr_text;
  std::string error;
  auto gateway = GatewayInstance::Start(config_path, dir.Join("data"), &error);
  ASSERT_NE(gateway, nullptr) << error;

  StalledReader stalled;
  ASSERT_TRUE(stalled.Start(gateway->traffic_port(), "/files/big.bin"));
  // While that client is stuck, others are served (and its connection is still open).
  for (int i = 0; i < 3; ++i) {
    std::optional<Response> response =
        Fetch(gateway->traffic_port(), MakeRequest(http::verb::get, "/files/small.txt"), &error);
    ASSERT_TRUE(response.has_value()) << error;
    EXPECT_EQ(response->result_int(), 200);
    EXPECT_EQ(response->body(), "small");
  }
  EXPECT_GE(ConnectionsOpen(gateway->admin_port()).value_or(0), 1.0);

  ASSERT_TRUE(GatewayIdle(gateway->admin_port()))
      << "the client that stopped reading was never cut off";
  // What the client can still read is what sat in socket buffers: the response was cut short.
  EXPECT_LT(stalled.DrainUntilClosed(), kBigBodyBytes);
  EXPECT_TRUE(stalled.closed_by_peer());
  // The gateway is healthy afterwards, and the file it was reading from is unchanged.
  std::optional<Response> after =
      Fetch(gateway->traffic_port(), MakeRequest(http::verb::get, "/files/small.txt"), &error);
  ASSERT_TRUE(after.has_value()) << error;
  EXPECT_EQ(after->result_int(), 200);
  EXPECT_EQ(fs::file_size(dir.Join("data/files/big.bin")), kBigBodyBytes);
}

// An HTTP backend answering GET /kv/big/... with kBigBodyBytes and anything else with "ok".
// Records whether a connection was closed by the gateway while a big body was being written.
class BigBodyBackend {
 public:
  BigBodyBackend() : acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}) {
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }
  ~BigBodyBackend() {
    stopping_ = true;
    boost::system::error_code ec;
    tcp::socket wake(io_);  // a blocking accept() is only woken by a connection
    wake.connect(acceptor_.local_endpoint(), ec);
    accept_thread_.join();
    std::lock_guard lock(mutex_);
    for (auto& connection : connections_) {
      connection.socket.shutdown(tcp::socket::shutdown_both, ec);
      connection.thread.join();
    }
  }
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
  bool big_body_cut_by_peer() const { return big_body_cut_by_peer_; }

 private:
  struct Connection {
    tcp::socket socket;
    std::thread thread;
  };

  void AcceptLoop() {
    while (!stopping_) {
      tcp::socket socket(io_);
      boost::system::error_code ec;
      acceptor_.accept(socket, ec);
      if (ec || stopping_) return;
      std::lock_guard lock(mutex_);
      auto& connection = connections_.emplace_back(Connection{std::move(socket), {}});
      connection.thread = std::thread([this, &connection] { Serve(connection.socket); });
    }
  }

  void Serve(tcp::socket& socket) {
    boost::system::error_code ec;
    asio::streambuf request;
    while (!ec) {
      const std::size_t header_bytes = asio::read_until(socket, request, "\r\n\r\n", ec);
      if (ec) return;
      const std::string header(static_cast<const char*>(request.data().data()), header_bytes);
      request.consume(header_bytes);
      const bool big = header.starts_with("GET /kv/big/");
      const std::uint64_t length = big ? kBigBodyBytes : 2;
      asio::write(
          socket,
          asio::buffer("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(length) + "\r\n\r\n"),
          ec);
      if (!big) {
        asio::write(socket, asio::buffer(std::string("ok")), ec);
        continue;
      }
      const std::string mib(1 << 20, 'b');
      for (std::uint64_t sent = 0; sent < length && !ec; sent += mib.size()) {
        asio::write(socket, asio::buffer(mib), ec);
      }
      if (ec && !stopping_) big_body_cut_by_peer_ = true;
    }
  }

  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::thread accept_thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> big_body_cut_by_peer_{false};
  std::mutex mutex_;
  std::list<Connection> connections_;
};

TEST(SlowReaderTest, HttpClientThatStopsReadingIsCutAndTheUpstreamIsClosed) {
  BigBodyBackend backend;
  TempDir dir;
  GatewayConfig config = GatewayConfig::HttpBackend(backend.port(), dir.Join("access.log"));
  config["timeouts"]["response_write"] = kResponseWrite;
  std::string error;
  auto gateway = GatewayInstance::Start(dir.WriteFile("fencegate.yaml", config.Yaml()),
                                        dir.Join("data"), &error);
  ASSERT_NE(gateway, nullptr) << error;

  StalledReader stalled;
  ASSERT_TRUE(stalled.Start(gateway->traffic_port(), "/kv/big/blob"));
  for (int i = 0; i < 3; ++i) {
    std::optional<Response> response =
        Fetch(gateway->traffic_port(), MakeRequest(http::verb::get, "/kv/small/x"), &error);
    ASSERT_TRUE(response.has_value()) << error;
    EXPECT_EQ(response->result_int(), 200);
    EXPECT_EQ(response->body(), "ok");
  }
  EXPECT_GE(ConnectionsOpen(gateway->admin_port()).value_or(0), 1.0);

  ASSERT_TRUE(GatewayIdle(gateway->admin_port()))
      << "the client that stopped reading was never cut off";
  EXPECT_LT(stalled.DrainUntilClosed(), kBigBodyBytes);
  EXPECT_TRUE(stalled.closed_by_peer());
  // The upstream connection the big body came from was closed, not left hanging or reused.
  EXPECT_TRUE(Eventually([&] { return backend.big_body_cut_by_peer(); }));
  std::optional<Response> after =
      Fetch(gateway->traffic_port(), MakeRequest(http::verb::get, "/kv/small/y"), &error);
  ASSERT_TRUE(after.has_value()) << error;
  EXPECT_EQ(after->result_int(), 200);
}

}  // namespace
}  // namespace fencegate::integration
