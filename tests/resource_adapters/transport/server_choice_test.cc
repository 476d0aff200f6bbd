#include "resource_adapters/transport/server_choice.h"
#include "resource_adapters/transport/resolve_once.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/ip/tcp.hpp>

#include "resource_adapters/transport/server_connection_pools.h"
#include "resource_adapters/transport/upstream_servers.h"

namespace fencegate::adapters {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Failure = ForwardOutcome::Failure;

// A loopback port nothing listens on (bound, then closed): connections to it are refused.
std::uint16_t ClosedPort() {
  asio::io_context ioc;
  tcp::acceptor acceptor(ioc, {asio::ip::make_address("127.0.0.1"), 0});
  return acceptor.local_endpoint().port();
}

ServerAddress Loopback(std::uint16_t port) {
  return ServerAddress{
      .url = "http://127.0.0.1:" + std::to_string(port), .host = "127.0.0.1", .port = port};
}

// Real loopback servers: listening ones accept (the kernel completes the handshake from the
// backlog), closed ones refuse.
class ServerChoiceTest : public ::testing::Test {
 protected:
  ServerChoiceTest() : acceptor_(ioc_, {asio::ip::make_address("127.0.0.1"), 0}) {}

  void Servers(std::vector<ServerAddress> addresses, BackendLimits limits = {}) {
    BalancingOptions options;
    options.servers = std::move(addresses);
    options.limits = limits;
    servers_ = std::make_shared<UpstreamServers>("test", std::move(options));
    // As the factory does (MakeBackendServers): the addresses known from the start.
    for (std::size_t i = 0; i < servers_->size(); ++i) {
      servers_->SetEndpoints(i, ResolveOnce(servers_->address(i).host, servers_->address(i).port));
    }
    pools_ = std::make_unique<ServerConnectionPools>(servers_, 8, std::chrono::seconds(60));
  }
  std::uint16_t live_port() const { return acceptor_.local_endpoint().port(); }

  // Runs Open to its end.
  OpenedConnection Open(ServerChoice& choice) {
    std::optional<OpenedConnection> result;
    choice.Open([&](OpenedConnection opened) { result = std::move(opened); });
    EXPECT_FALSE(result.has_value()) << "the handler ran inside Open";
    ioc_.restart();
    while (!result && ioc_.run_one() > 0) {
    }
    EXPECT_TRUE(result.has_value());
    return result ? std::move(*result) : OpenedConnection{};
  }

  UpstreamServers::ServerSnapshot State(std::size_t server) const {
    return servers_->Snapshot()[server];
  }

  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  ServerConnectSettings settings_;
  std::shared_ptr<UpstreamServers> servers_;
  std::unique_ptr<ServerConnectionPools> pools_;
};

TEST_F(ServerChoiceTest, UnreachableServersAreReportedAndTheRequestMovesToALiveOne) {
  Servers({Loopback(ClosedPort()), Loopback(ClosedPort()), Loopback(live_port())});
  // Whatever the pick, the request ends on the live server after at most two refusals.
  ServerChoice choice(ioc_, *pools_, settings_);
  ASSERT_FALSE(choice.Begin("").has_value());
  OpenedConnection opened = Open(choice);
  ASSERT_NE(opened.connection, nullptr) << (opened.problem ? opened.problem->detail : "");
  EXPECT_EQ(opened.connection->server(), 2u);
  EXPECT_EQ(choice.server(), 2u);
  EXPECT_EQ(choice.server_url(), "http://127.0.0.1:" + std::to_string(live_port()));
  EXPECT_TRUE(opened.connection->is_open());
  // Counted where it went, and only there.
  EXPECT_EQ(State(2).in_flight, 1u);
  EXPECT_EQ(State(2).connections, 1u);
  for (std::size_t refused : {0u, 1u}) {
    EXPECT_EQ(State(refused).in_flight, 0u) << refused;
    EXPECT_EQ(State(refused).connections, 0u) << refused;
  }
  // A refused server that was tried is no longer usable; the next request goes straight to
  // the live one.
  choice.End();
  EXPECT_EQ(State(2).in_flight, 0u);
  ServerChoice next(ioc_, *pools_, settings_);
  ASSERT_FALSE(next.Begin("").has_value());
  if (next.server() != 2u) {
    EXPECT_TRUE(State(next.server()).usable) << "picked an unusable server";
  }
}

TEST_F(ServerChoiceTest, ConnectionsCountUntilDestroyedIdleOnesIncluded) {
  Servers({Loopback(live_port())});
  {
    ServerChoice choice(ioc_, *pools_, settings_);
    ASSERT_FALSE(choice.Begin("").has_value());
    OpenedConnection opened = Open(choice);
    ASSERT_NE(opened.connection, nullptr);
    EXPECT_EQ(State(0).connections, 1u);
    choice.Give(std::move(opened.connection));
    EXPECT_EQ(pools_->idle_count(0), 1u);
    EXPECT_EQ(State(0).connections, 1u);  // idle, still open
    // The next request of the thread reuses it.
    auto reused = choice.TakeIdle(UpstreamConnectionPool::Probe::kOnUse);
    ASSERT_NE(reused, nullptr);
    EXPECT_EQ(reused->server(), 0u);
    choice.Give(std::move(reused));
  }
  EXPECT_EQ(State(0).in_flight, 0u);
  EXPECT_EQ(State(0).connections, 1u);
  pools_->CloseAll();
  EXPECT_EQ(State(0).connections, 0u);
}

// A server whose name now resolves elsewhere: its kept-alive connections go to the address the
// name left, so they are closed instead of reused, and the next connection follows the name.
TEST_F(ServerChoiceTest, ConnectionsToAnAddressTheNameLeftAreNotReused) {
  Servers({Loopback(live_port())});
  ServerChoice choice(ioc_, *pools_, settings_);
  ASSERT_FALSE(choice.Begin("").has_value());
  OpenedConnection opened = Open(choice);
  ASSERT_NE(opened.connection, nullptr);
  choice.Give(std::move(opened.connection));
  ASSERT_EQ(pools_->idle_count(0), 1u);
  const auto before = pools_->servers().endpoints(0);
  // The same list again is no change.
  pools_->servers().SetEndpoints(0, *before);
  auto same = choice.TakeIdle(UpstreamConnectionPool::Probe::kOnUse);
  ASSERT_NE(same, nullptr);
  choice.Give(std::move(same));
  UpstreamServers::Endpoints moved = *before;
  moved.push_back(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.2"),
                                                 moved.front().port()));
  pools_->servers().SetEndpoints(0, moved);
  EXPECT_EQ(choice.TakeIdle(UpstreamConnectionPool::Probe::kOnUse), nullptr);
  EXPECT_EQ(State(0).connections, 0u);
  OpenedConnection fresh = Open(choice);
  ASSERT_NE(fresh.connection, nullptr);
  choice.Give(std::move(fresh.connection));
  EXPECT_EQ(pools_->idle_count(0), 1u);
}

// A name that has not resolved yet: the server cannot be reached (no lookup on the network
// thread), and the request moves to another one.
TEST_F(ServerChoiceTest, AServerWithoutAddressesIsUnreachable) {
  Servers({Loopback(live_port()), Loopback(live_port())});
  servers_->SetEndpoints(0, {});
  ServerChoice choice(ioc_, *pools_, settings_);
  ASSERT_FALSE(choice.Begin("").has_value());
  ASSERT_EQ(choice.server(), 0u);
  OpenedConnection opened = Open(choice);
  ASSERT_NE(opened.connection, nullptr);
  EXPECT_EQ(opened.connection->server(), 1u);
  EXPECT_EQ(servers_->counters().retries_connect_failed, 1u);
}

TEST_F(ServerChoiceTest, NoServerLeftIs503NoHealthyBackendWithRetryAfter) {
  Servers({Loopback(ClosedPort()), Loopback(ClosedPort())});
  ServerChoice choice(ioc_, *pools_, settings_);
  ASSERT_FALSE(choice.Begin("").has_value());
  OpenedConnection opened = Open(choice);
  EXPECT_EQ(opened.connection, nullptr);
  EXPECT_EQ(opened.failure, Failure::kUpstreamConnect);
  EXPECT_EQ(opened.error, asio::error::connection_refused);
  ASSERT_TRUE(opened.problem.has_value());
  EXPECT_EQ(opened.problem->status, 503u);
  EXPECT_EQ(opened.problem->type, "no-healthy-backend");
  EXPECT_TRUE(opened.problem->retry_after);
  EXPECT_GE(opened.problem->retry_after_seconds, 1u);
  choice.End();
  // Both are out now: a new request is refused before it tries anything.
  EXPECT_FALSE(servers_->AnyUsable());
  ServerChoice next(ioc_, *pools_, settings_);
  const std::optional<Problem> refused = next.Begin("");
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->type, "no-healthy-backend");
  EXPECT_EQ(State(0).in_flight + State(1).in_flight, 0u);
}

TEST_F(ServerChoiceTest, APinnedRequestNeverMoves) {
  Servers({Loopback(ClosedPort()), Loopback(live_port())});
  ServerChoice choice(ioc_, *pools_, settings_);
  ASSERT_FALSE(choice.Begin("", /*pinned=*/0).has_value());
  OpenedConnection opened = Open(choice);
  EXPECT_EQ(opened.connection, nullptr);
  ASSERT_TRUE(opened.problem.has_value());
  EXPECT_EQ(opened.problem->status, 502u);
  EXPECT_EQ(opened.problem->type, "upstream-connect-failed");
  EXPECT_EQ(choice.server(), 0u);
  EXPECT_EQ(State(1).connections, 0u);
}

TEST_F(ServerChoiceTest, MaxPendingRefusesTheRequestOverTheLimit) {
  Servers({Loopback(live_port()), Loopback(live_port())}, BackendLimits{.max_pending = 1});
  ServerChoice first(ioc_, *pools_, settings_);
  ASSERT_FALSE(first.Begin("").has_value());
  ServerChoice second(ioc_, *pools_, settings_);
  const std::optional<Problem> refused = second.Begin("");
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 503u);
  EXPECT_EQ(refused->type, "backend-overloaded");
  EXPECT_TRUE(refused->retry_after);
  EXPECT_EQ(refused->retry_after_seconds, 1u);
  first.End();
  ServerChoice third(ioc_, *pools_, settings_);
  EXPECT_FALSE(third.Begin("").has_value());
}

TEST_F(ServerChoiceTest, MaxConnectionsRefusesANewConnectionOverTheLimit) {
  Servers({Loopback(live_port())}, BackendLimits{.max_connections = 1});
  ServerChoice first(ioc_, *pools_, settings_);
  ASSERT_FALSE(first.Begin("").has_value());
  OpenedConnection held = Open(first);
  ASSERT_NE(held.connection, nullptr);
  ServerChoice second(ioc_, *pools_, settings_);
  ASSERT_FALSE(second.Begin("").has_value());
  OpenedConnection refused = Open(second);
  EXPECT_EQ(refused.connection, nullptr);
  ASSERT_TRUE(refused.problem.has_value());
  EXPECT_EQ(refused.problem->type, "backend-overloaded");
  // The server is not to blame: still usable.
  EXPECT_TRUE(State(0).usable);
  held.connection.reset();
  ServerChoice third(ioc_, *pools_, settings_);
  ASSERT_FALSE(third.Begin("").has_value());
  EXPECT_NE(Open(third).connection, nullptr);
}

}  // namespace
}  // namespace fencegate::adapters
