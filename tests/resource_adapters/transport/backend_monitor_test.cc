// BackendMonitor against real servers: an nginx (Debian's nginx-light) with a healthy and a
// failing listener, a TLS listener with the test certificates, and a closed port.
#include "resource_adapters/transport/backend_monitor.h"

#include <csignal>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>

#include "base/tls_client/client_tls.h"
#include "tests/support/eventually.h"
#include "tests/support/free_port.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_certs.h"

namespace fencegate::adapters {
namespace {

using namespace std::chrono_literals;
using integration::Eventually;
using integration::FreeLoopbackPort;
using integration::Process;
using integration::TempDir;
using tcp = boost::asio::ip::tcp;

ServerAddress Server(const std::string& scheme, const std::string& host, std::uint16_t port) {
  ServerAddress server;
  server.url = scheme + "://" + host + ":" + std::to_string(port);
  server.host = host;
  server.port = port;
  server.tls = scheme == "https";
  return server;
}

bool Connects(std::uint16_t port) {
  boost::asio::io_context ioc;
  tcp::socket socket(ioc);
  boost::system::error_code ec;
  socket.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port), ec);
  return !ec;
}

class BackendMonitorTest : public ::testing::Test {
 protected:
  void TearDown() override {
    StopMonitor();
    if (nginx_) nginx_->Stop(10s);
  }

  // nginx: /health answers 200 on ok_port_, 500 on failing_port_ and 200 over TLS on
  // tls_port_ (certificate for localhost/127.0.0.1 from the test CA).
  void StartNginx() {
    const std::string dir = dir_.Join("nginx");
    std::filesystem::create_directories(dir);
    if (ok_port_ == 0) {
      std::string error;
      ASSERT_TRUE(integration::MakeTestCerts(certs_, &error)) << error;
      ok_port_ = FreeLoopbackPort();
      failing_port_ = FreeLoopbackPort();
      tls_port_ = FreeLoopbackPort();
    }
    const std::string conf = dir_.WriteFile(
        "nginx/nginx.conf",
        "daemon off;\nmaster_process off;\nworker_processes 1;\npid " + dir + "/nginx.pid;\n" +
            "error_log " + dir + "/error.log warn;\nevents { worker_connections 64; }\nhttp {\n" +
            "  access_log off;\n  client_body_temp_path " + dir + ";\n  proxy_temp_path " + dir +
            ";\n  fastcgi_temp_path " + dir + ";\n  uwsgi_temp_path " + dir +
            ";\n  scgi_temp_path " + dir + ";\n" +
            "  server {\n    listen 127.0.0.1:" + std::to_string(ok_port_) +
            ";\n    location = /health { return 200 \"ok $host\\n\"; }\n  }\n" +
            "  server {\n    listen 127.0.0.1:" + std::to_string(failing_port_) +
            ";\n    location = /health { return 500; }\n  }\n" +
            "  server {\n    listen 127.0.0.1:" + std::to_string(tls_port_) +
            " ssl;\n    ssl_certificate " + certs_ + "/server.pem;\n    ssl_certificate_key " +
            certs_ + "/server.key;\n    location = /health { return 200; }\n  }\n}\n");
    std::string error;
    nginx_ = Process::Start({"/usr/sbin/nginx", "-p", dir, "-c", conf}, &error);
    ASSERT_NE(nginx_, nullptr) << error;
    ASSERT_TRUE(Eventually([&] {
      return Connects(ok_port_) && Connects(failing_port_) && Connects(tls_port_);
    })) << "nginx did not start: "
        << nginx_->Stderr();
  }

  void StartMonitor(BalancingOptions options) {
    tls_client::ClientTlsOptions tls_options;
    tls_options.ca_file = certs_ + "/ca.pem";
    std::shared_ptr<boost::asio::ssl::context> tls_context;
    if (std::filesystem::exists(tls_options.ca_file)) {
      std::string error;
      tls_context = tls_client::BuildClientContext(tls_options, &error);
      ASSERT_NE(tls_context, nullptr) << error;
    }
    servers_ = std::make_shared<UpstreamServers>("b", std::move(options));
    monitor_ = BackendMonitor::Start(ioc_, servers_, tls_context, tls_options);
    thread_ = std::thread([this] { ioc_.run(); });
  }

  // Stop runs on the io_context's thread, as its contract says.
  void StopMonitor() {
    if (!thread_.joinable()) return;
    boost::asio::post(ioc_, [this] { monitor_->Stop(); });
    work_.reset();
    thread_.join();
  }

  UpstreamServers::ServerSnapshot Snapshot(std::size_t server) const {
    return servers_->Snapshot().at(server);
  }

  static HealthCheckOptions FastChecks() {
    HealthCheckOptions checks;
    checks.path = "/health";
    checks.interval = 50ms;
    checks.timeout = 2s;
    checks.healthy_threshold = 2;
    checks.unhealthy_threshold = 2;
    checks.expected_status_min = 200;
    checks.expected_status_max = 299;
    return checks;
  }

  TempDir dir_;
  const std::string certs_ = dir_.Join("certs");
  std::uint16_t ok_port_ = 0;
  std::uint16_t failing_port_ = 0;
  std::uint16_t tls_port_ = 0;
  std::unique_ptr<Process> nginx_;
  boost::asio::io_context ioc_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_{
      ioc_.get_executor()};
  std::shared_ptr<UpstreamServers> servers_;
  std::shared_ptr<BackendMonitor> monitor_;
  std::thread thread_;
};

TEST_F(BackendMonitorTest, HealthChecksJudgeEachServerByItsAnswer) {
  ASSERT_NO_FATAL_FAILURE(StartNginx());
  BalancingOptions options;
  options.servers = {Server("http", "127.0.0.1", ok_port_),
                     Server("http", "127.0.0.1", failing_port_),
                     Server("http", "127.0.0.1", FreeLoopbackPort()),  // nothing listens: refused
                     Server("https", "localhost", tls_port_)};
  options.health_check = FastChecks();
  ASSERT_NO_FATAL_FAILURE(StartMonitor(options));

  EXPECT_TRUE(Eventually([&] {
    const auto servers = servers_->Snapshot();
    return servers[0].health_checks_passed >= 3 && servers[3].health_checks_passed >= 3 &&
           !servers[1].healthy && !servers[2].healthy;
  })) << servers_->Snapshot()[0].last_check_result
      << " / " << servers_->Snapshot()[3].last_check_result;
  const auto servers = servers_->Snapshot();
  EXPECT_TRUE(servers[0].usable);
  EXPECT_EQ(servers[0].health_checks_failed, 0u);
  EXPECT_EQ(servers[0].last_check_result, "passed: status 200");
  EXPECT_GT(servers[0].last_check_unix_ms, 0);
  EXPECT_EQ(servers[1].reason, UpstreamServers::Unusable::kHealthCheck);
  EXPECT_EQ(servers[1].last_check_result, "failed: status 500");
  EXPECT_EQ(servers[1].health_checks_passed, 0u);
  EXPECT_EQ(servers[2].last_check_result.rfind("failed: connect: ", 0), 0u)
      << servers[2].last_check_result;
  EXPECT_TRUE(servers[3].usable);
  EXPECT_EQ(servers[3].health_checks_failed, 0u);
}

TEST_F(BackendMonitorTest, AServerThatStopsIsMarkedDownAndReturnsAfterItsRestart) {
  ASSERT_NO_FATAL_FAILURE(StartNginx());
  BalancingOptions options;
  options.servers = {Server("http", "127.0.0.1", ok_port_),
                     Server("http", "127.0.0.1", failing_port_)};
  options.health_check = FastChecks();
  ASSERT_NO_FATAL_FAILURE(StartMonitor(options));
  ASSERT_TRUE(Eventually([&] { return Snapshot(0).health_checks_passed >= 2; }));

  nginx_->Signal(SIGKILL);
  nginx_.reset();
  EXPECT_TRUE(Eventually([&] { return !Snapshot(0).healthy; })) << Snapshot(0).last_check_result;
  EXPECT_FALSE(servers_->AnyUsable());

  ASSERT_NO_FATAL_FAILURE(StartNginx());
  EXPECT_TRUE(Eventually([&] { return Snapshot(0).usable; })) << Snapshot(0).last_check_result;
  EXPECT_FALSE(Snapshot(1).usable);
}

// A check that cannot finish in time fails as a timeout: the server accepts (the kernel's
// backlog) but never answers.
TEST_F(BackendMonitorTest, ACheckWithoutAnAnswerTimesOut) {
  boost::asio::io_context listener_ioc;
  tcp::acceptor silent(listener_ioc, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  BalancingOptions options;
  options.servers = {Server("http", "127.0.0.1", silent.local_endpoint().port())};
  options.health_check = FastChecks();
  options.health_check->timeout = 100ms;
  ASSERT_NO_FATAL_FAILURE(StartMonitor(options));
  EXPECT_TRUE(Eventually([&] { return !Snapshot(0).healthy; }));
  EXPECT_EQ(Snapshot(0).last_check_result, "failed: response: timed out");
}

TEST_F(BackendMonitorTest, ServerNamesAreResolvedAtStart) {
  BalancingOptions options;
  options.servers = {Server("http", "localhost", 8080), Server("http", "127.0.0.1", 8081)};
  options.resolve_interval = 0ms;
  ASSERT_NO_FATAL_FAILURE(StartMonitor(options));
  EXPECT_TRUE(Eventually(
      [&] { return !servers_->endpoints(0)->empty() && !servers_->endpoints(1)->empty(); }));
  const auto localhost = servers_->endpoints(0);  // held: the loop outlives a temporary
  for (const tcp::endpoint& endpoint : *localhost) {
    EXPECT_TRUE(endpoint.address().is_loopback()) << endpoint;
    EXPECT_EQ(endpoint.port(), 8080);
  }
  EXPECT_EQ(*servers_->endpoints(1), (UpstreamServers::Endpoints{tcp::endpoint(
                                         boost::asio::ip::make_address("127.0.0.1"), 8081)}));
  // Without health checks the servers stay as they started.
  EXPECT_TRUE(Snapshot(0).usable);
  EXPECT_EQ(Snapshot(0).last_check_unix_ms, 0);
}

// A name that no longer resolves keeps the addresses it had: re-resolving every 20 ms must not
// empty them.
TEST_F(BackendMonitorTest, AFailedLookupKeepsTheLastAddresses) {
  BalancingOptions options;
  options.servers = {Server("http", "no-such-host.invalid", 8080),
                     Server("http", "localhost", 8080)};
  options.resolve_interval = 20ms;
  const tcp::endpoint known(boost::asio::ip::make_address("10.1.2.3"), 8080);
  ASSERT_NO_FATAL_FAILURE(StartMonitor(options));
  servers_->SetEndpoints(0, {known});
  // Several rounds pass: each round resolves localhost again, which the test sees by
  // clearing its addresses and waiting for them to come back.
  for (int round = 0; round < 3; ++round) {
    servers_->SetEndpoints(1, {});
    ASSERT_TRUE(Eventually([&] { return !servers_->endpoints(1)->empty(); }));
  }
  EXPECT_EQ(*servers_->endpoints(0), (UpstreamServers::Endpoints{known}));
}

}  // namespace
}  // namespace fencegate::adapters
