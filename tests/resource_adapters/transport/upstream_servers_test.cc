#include "resource_adapters/transport/upstream_servers.h"

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "resource_adapters/transport/rendezvous_hash.h"

namespace fencegate::adapters {
namespace {

using namespace std::chrono_literals;
using Clock = UpstreamServers::Clock;
using Unusable = UpstreamServers::Unusable;

BalancingOptions Options(const std::vector<unsigned>& weights, BalancingPolicy policy) {
  BalancingOptions options;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    ServerAddress server;
    server.url = "http://10.0.0." + std::to_string(i + 1) + ":8080";
    server.host = "10.0.0." + std::to_string(i + 1);
    server.port = 8080;
    server.weight = weights[i];
    options.servers.push_back(server);
  }
  options.policy = policy;
  return options;
}

// The servers under a clock the test moves.
class UpstreamServersTest : public ::testing::Test {
 protected:
  std::unique_ptr<UpstreamServers> Make(BalancingOptions options) {
    return std::make_unique<UpstreamServers>("b", std::move(options), [this] { return now_; });
  }

  std::size_t PickOne(const UpstreamServers& servers, std::string_view key = "",
                      const std::vector<bool>& tried = {}) {
    const std::optional<std::size_t> picked = servers.Pick(key, tried, cursor_);
    EXPECT_TRUE(picked.has_value());
    return picked.value_or(servers.size());
  }

  UpstreamServers::ServerSnapshot Server(const UpstreamServers& servers, std::size_t i) {
    return servers.Snapshot().at(i);
  }

  static void FailResponses(UpstreamServers& servers, std::size_t server, unsigned count) {
    for (unsigned i = 0; i < count; ++i) servers.OnResponse(server, 503);
  }

  Clock::time_point now_ = Clock::time_point(std::chrono::hours(1));
  UpstreamServers::PickCursor cursor_;
};

// ---- round robin

TEST_F(UpstreamServersTest, RoundRobinSpreadsByWeightExactlyOverEachCycleAndInterleaves) {
  auto servers = Make(Options({5, 1, 1}, BalancingPolicy::kRoundRobin));
  std::string order;
  for (int i = 0; i < 7; ++i) order += static_cast<char>('a' + PickOne(*servers));
  EXPECT_EQ(order, "aabacaa");  // nginx's smooth sequence for 5, 1, 1
  std::vector<int> counts(3);
  for (int i = 0; i < 70; ++i) ++counts[PickOne(*servers)];
  EXPECT_EQ(counts, (std::vector<int>{50, 10, 10}));
}

TEST_F(UpstreamServersTest, RoundRobinSkipsUnusableAndTriedServers) {
  auto servers = Make(Options({1, 1, 1}, BalancingPolicy::kRoundRobin));
  servers->OnConnectFailed(1, false);
  std::vector<int> counts(3);
  for (int i = 0; i < 10; ++i) ++counts[PickOne(*servers)];
  EXPECT_EQ(counts, (std::vector<int>{5, 0, 5}));
  for (int i = 0; i < 10; ++i) EXPECT_EQ(PickOne(*servers, "", {true, false, false}), 2u);
  EXPECT_EQ(servers->Pick("", {true, false, true}, cursor_), std::nullopt);
}

// ---- least request

TEST_F(UpstreamServersTest, LeastRequestPicksTheLessLoadedOfTwo) {
  auto servers = Make(Options({1, 1}, BalancingPolicy::kLeastRequest));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(servers->TryBeginRequest(0));
  for (int i = 0; i < 100; ++i) EXPECT_EQ(PickOne(*servers), 1u);
  for (int i = 0; i < 5; ++i) servers->EndRequest(0);
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(servers->TryBeginRequest(1));
  for (int i = 0; i < 100; ++i) EXPECT_EQ(PickOne(*servers), 0u);
}

TEST_F(UpstreamServersTest, LeastRequestFavoursTheIdleServerAmongThree) {
  auto servers = Make(Options({1, 1, 1}, BalancingPolicy::kLeastRequest));
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(servers->TryBeginRequest(0));
    ASSERT_TRUE(servers->TryBeginRequest(2));
  }
  std::vector<int> counts(3);
  for (int i = 0; i < 3000; ++i) ++counts[PickOne(*servers)];
  // Two random candidates hold the idle one 2/3 of the time, and it always wins then.
  EXPECT_NEAR(counts[1], 2000, 150);
  EXPECT_GT(counts[0], 0);
  EXPECT_GT(counts[2], 0);
}

TEST_F(UpstreamServersTest, LeastRequestWeighsTheLoad) {
  // One request on a server of weight 3 is less load than none on a server of weight 1
  // ((1 + 1) / 3 < (0 + 1) / 1).
  auto servers = Make(Options({3, 1}, BalancingPolicy::kLeastRequest));
  ASSERT_TRUE(servers->TryBeginRequest(0));
  for (int i = 0; i < 100; ++i) EXPECT_EQ(PickOne(*servers), 0u);
}

// ---- fence key

std::vector<std::size_t> Assign(UpstreamServers& servers, UpstreamServers::PickCursor& cursor,
                                int keys) {
  std::vector<std::size_t> owner;
  for (int k = 0; k < keys; ++k) {
    owner.push_back(servers.Pick("bucket/object-" + std::to_string(k), {}, cursor).value());
  }
  return owner;
}

TEST_F(UpstreamServersTest, FenceKeySendsAKeyAlwaysToOneServer) {
  auto servers = Make(Options({1, 1, 1}, BalancingPolicy::kFenceKey));
  const std::size_t first = PickOne(*servers, "orders:42");
  for (int i = 0; i < 50; ++i) EXPECT_EQ(PickOne(*servers, "orders:42"), first);
}

TEST_F(UpstreamServersTest, FenceKeyMovesOnlyTheKeysOfAServerThatLeavesAndBringsThemBack) {
  BalancingOptions options = Options({1, 1, 1, 1}, BalancingPolicy::kFenceKey);
  options.outlier.base_ejection_time = 10s;
  auto servers = Make(options);
  const std::vector<std::size_t> before = Assign(*servers, cursor_, 10000);
  servers->OnConnectFailed(2, false);
  const std::vector<std::size_t> during = Assign(*servers, cursor_, 10000);
  int moved = 0;
  for (std::size_t k = 0; k < before.size(); ++k) {
    if (before[k] == 2) {
      EXPECT_NE(during[k], 2u);
      ++moved;
    } else {
      EXPECT_EQ(during[k], before[k]) << "key " << k << " moved though its server stayed";
    }
  }
  EXPECT_NEAR(moved, 2500, 250);
  now_ += 10s;
  EXPECT_EQ(Assign(*servers, cursor_, 10000), before);
}

TEST_F(UpstreamServersTest, FenceKeyShareFollowsTheWeights) {
  auto servers = Make(Options({1, 2, 3, 4}, BalancingPolicy::kFenceKey));
  std::vector<int> counts(4);
  for (const std::size_t owner : Assign(*servers, cursor_, 20000)) ++counts[owner];
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(counts[i] / 20000.0, (i + 1) / 10.0, 0.02) << "server " << i;
  }
}

// Gateways configured with the same urls agree, in whatever order they list them: the hash
// depends on the key and the url only, and is fixed (FNV-1a 64 then splitmix64).
TEST_F(UpstreamServersTest, FenceKeyOwnerDependsOnTheUrlsNotTheirOrderOrTheProcess) {
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(Mix64(0), 0u);
  EXPECT_EQ(Mix64(1), 0x5692161d100b05e5ull);
  BalancingOptions options = Options({1, 1, 1}, BalancingPolicy::kFenceKey);
  auto servers = Make(options);
  std::swap(options.servers[0], options.servers[2]);
  auto reordered = Make(options);
  UpstreamServers::PickCursor other_cursor;
  const std::vector<std::size_t> owners = Assign(*servers, cursor_, 1000);
  const std::vector<std::size_t> reordered_owners = Assign(*reordered, other_cursor, 1000);
  for (std::size_t k = 0; k < owners.size(); ++k) {
    EXPECT_EQ(servers->address(owners[k]).url, reordered->address(reordered_owners[k]).url);
  }
}

TEST_F(UpstreamServersTest, FenceKeyExcludesTriedServersAndRoundRobinsWithoutAKey) {
  auto servers = Make(Options({1, 1, 1}, BalancingPolicy::kFenceKey));
  const std::size_t owner = PickOne(*servers, "k");
  std::vector<bool> tried(3, false);
  tried[owner] = true;
  const std::size_t second = PickOne(*servers, "k", tried);
  EXPECT_NE(second, owner);
  tried[second] = true;
  EXPECT_NE(PickOne(*servers, "k", tried), second);
  std::vector<int> counts(3);
  for (int i = 0; i < 30; ++i) ++counts[PickOne(*servers)];
  EXPECT_EQ(counts, (std::vector<int>{10, 10, 10}));
}

// ---- limits

TEST_F(UpstreamServersTest, MaxPendingRefusesAndCounts) {
  BalancingOptions options = Options({1, 1}, BalancingPolicy::kRoundRobin);
  options.limits.max_pending = 2;
  auto servers = Make(options);
  EXPECT_TRUE(servers->TryBeginRequest(0));
  EXPECT_TRUE(servers->TryBeginRequest(1));
  EXPECT_FALSE(servers->TryBeginRequest(0));
  EXPECT_EQ(servers->counters().overload_max_pending, 1u);
  EXPECT_EQ(Server(*servers, 0).in_flight, 1u);
  servers->EndRequest(1);
  EXPECT_TRUE(servers->TryBeginRequest(0));
  EXPECT_EQ(Server(*servers, 0).in_flight, 2u);
  EXPECT_EQ(Server(*servers, 0).requests, 2u);
  EXPECT_EQ(servers->counters().overload_max_pending, 1u);
}

TEST_F(UpstreamServersTest, MaxConnectionsRefusesAndCounts) {
  BalancingOptions options = Options({1, 1}, BalancingPolicy::kRoundRobin);
  options.limits.max_connections = 1;
  auto servers = Make(options);
  EXPECT_TRUE(servers->TryOpenConnection(1));
  EXPECT_FALSE(servers->TryOpenConnection(0));
  EXPECT_FALSE(servers->TryOpenConnection(1));
  EXPECT_EQ(servers->counters().overload_max_connections, 2u);
  EXPECT_EQ(Server(*servers, 1).connections, 1u);
  servers->ConnectionClosed(1);
  EXPECT_TRUE(servers->TryOpenConnection(0));
  EXPECT_EQ(Server(*servers, 0).connections, 1u);
  EXPECT_EQ(Server(*servers, 1).connections, 0u);
}

TEST_F(UpstreamServersTest, WithoutLimitsNothingIsRefused) {
  auto servers = Make(Options({1}, BalancingPolicy::kRoundRobin));
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(servers->TryBeginRequest(0));
    ASSERT_TRUE(servers->TryOpenConnection(0));
  }
  EXPECT_EQ(servers->counters().overload_max_pending, 0u);
  EXPECT_EQ(servers->counters().overload_max_connections, 0u);
}

TEST_F(UpstreamServersTest, AdaptersCountRetriesAndNoHealthyServer) {
  auto servers = Make(Options({1, 1}, BalancingPolicy::kRoundRobin));
  servers->CountRetry(false);
  servers->CountRetry(true);
  servers->CountRetry(true);
  servers->CountNoHealthyServer();
  const UpstreamServers::Counters counters = servers->counters();
  EXPECT_EQ(counters.retries_connect_failed, 1u);
  EXPECT_EQ(counters.retries_tls_failed, 2u);
  EXPECT_EQ(counters.no_healthy_server, 1u);
}

// Network threads share one instance: every request counted in is counted out, and the limit
// holds across threads.
TEST_F(UpstreamServersTest, ThreadsSharingTheServersKeepTheCountsExact) {
  BalancingOptions options = Options({1, 2, 3}, BalancingPolicy::kLeastRequest);
  options.limits.max_pending = 3;
  UpstreamServers servers("b", options);
  constexpr int kThreads = 4;
  constexpr int kRequests = 20000;
  std::vector<std::thread> threads;
  std::atomic<std::uint64_t> begun{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      UpstreamServers::PickCursor cursor;
      for (int i = 0; i < kRequests; ++i) {
        const std::optional<std::size_t> server = servers.Pick("", {}, cursor);
        ASSERT_TRUE(server.has_value());
        if (!servers.TryBeginRequest(*server)) continue;
        begun.fetch_add(1);
        servers.OnResponse(*server, 200);
        servers.EndRequest(*server);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  std::uint64_t requests = 0;
  for (const auto& server : servers.Snapshot()) {
    EXPECT_EQ(server.in_flight, 0u);
    requests += server.requests;
  }
  EXPECT_EQ(requests, begun.load());
  EXPECT_EQ(begun.load() + servers.counters().overload_max_pending, kThreads * kRequests);
  // The backend-wide count is back to zero: three fit under the limit, a fourth does not.
  EXPECT_TRUE(servers.TryBeginRequest(0) && servers.TryBeginRequest(1) &&
              servers.TryBeginRequest(2));
  EXPECT_FALSE(servers.TryBeginRequest(0));
}

// ---- passive health

TEST_F(UpstreamServersTest, ConsecutiveServerErrorsEjectWithinTheCap) {
  BalancingOptions options = Options({1, 1, 1}, BalancingPolicy::kRoundRobin);
  options.outlier.consecutive_failures = 3;
  options.outlier.max_ejected_percent = 50;
  options.outlier.base_ejection_time = 10s;
  auto servers = Make(options);
  // A success in between starts the count again.
  FailResponses(*servers, 0, 2);
  servers->OnResponse(0, 404);
  FailResponses(*servers, 0, 2);
  EXPECT_TRUE(Server(*servers, 0).usable);
  servers->OnResponse(0, 500);
  EXPECT_FALSE(Server(*servers, 0).usable);
  EXPECT_TRUE(Server(*servers, 0).ejected);
  EXPECT_EQ(Server(*servers, 0).reason, Unusable::kServerErrors);
  EXPECT_EQ(Server(*servers, 0).ejections, 1u);
  // A second ejection would take 2 of 3 servers out: over 50 %.
  FailResponses(*servers, 1, 5);
  EXPECT_TRUE(Server(*servers, 1).usable);
  EXPECT_EQ(Server(*servers, 1).ejections, 0u);
  // Once the first is back, the next 5xx of the second ejects it (its count stayed).
  now_ += 10s;
  EXPECT_TRUE(Server(*servers, 0).usable);
  servers->OnResponse(1, 502);
  EXPECT_TRUE(Server(*servers, 1).ejected);
  EXPECT_EQ(Server(*servers, 1).reason, Unusable::kServerErrors);
}

TEST_F(UpstreamServersTest, ConnectFailuresEjectWhateverTheCap) {
  BalancingOptions options = Options({1, 1, 1}, BalancingPolicy::kRoundRobin);
  options.outlier.max_ejected_percent = 10;
  options.outlier.base_ejection_time = 5s;
  auto servers = Make(options);
  for (std::size_t i = 0; i < 3; ++i) servers->OnConnectFailed(i, i == 2);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(Server(*servers, i).ejected) << i;
    EXPECT_EQ(Server(*servers, i).reason, Unusable::kConnectFailures);
  }
  EXPECT_FALSE(servers->AnyUsable());
  EXPECT_EQ(servers->Pick("", {}, cursor_), std::nullopt);
  EXPECT_EQ(servers->RetryAfter(), 5s);
  now_ += 2500ms;
  EXPECT_EQ(servers->RetryAfter(), 3s);  // rounded up
  // Requests that were connecting when it went report too: still one ejection.
  servers->OnConnectFailed(0, false);
  EXPECT_EQ(Server(*servers, 0).ejections, 1u);
  now_ += 2500ms;
  EXPECT_TRUE(servers->AnyUsable());
}

TEST_F(UpstreamServersTest, EjectionTimeDoublesUpToTheMaximumAndTheRowResets) {
  BalancingOptions options = Options({1, 1}, BalancingPolicy::kRoundRobin);
  options.outlier.base_ejection_time = 1s;
  options.outlier.max_ejection_time = 4s;
  auto servers = Make(options);
  for (const auto expected : {1s, 2s, 4s, 4s}) {
    servers->OnConnectFailed(0, false);
    EXPECT_EQ(Server(*servers, 0).ejected_for, expected);
    now_ += expected - 1ms;
    EXPECT_FALSE(Server(*servers, 0).usable);
    now_ += 1ms;
    EXPECT_TRUE(Server(*servers, 0).usable);
  }
  // Out of ejection for less than max_ejection_time: the row goes on.
  now_ += 3s;
  servers->OnConnectFailed(0, false);
  EXPECT_EQ(Server(*servers, 0).ejected_for, 4s);
  // For max_ejection_time: it starts again.
  now_ += 4s + 4s;
  servers->OnConnectFailed(0, false);
  EXPECT_EQ(Server(*servers, 0).ejected_for, 1s);
  EXPECT_EQ(Server(*servers, 0).ejections, 6u);
}

TEST_F(UpstreamServersTest, AOneServerBackendIsNeverEjected) {
  BalancingOptions options = Options({1}, BalancingPolicy::kRoundRobin);
  options.outlier.consecutive_failures = 1;
  options.outlier.max_ejected_percent = 100;
  auto servers = Make(options);
  servers->OnConnectFailed(0, false);
  FailResponses(*servers, 0, 5);
  EXPECT_TRUE(servers->AnyUsable());
  EXPECT_EQ(Server(*servers, 0).ejections, 0u);
}

TEST_F(UpstreamServersTest, ZeroConsecutiveFailuresTurnsServerErrorEjectionOff) {
  BalancingOptions options = Options({1, 1}, BalancingPolicy::kRoundRobin);
  options.outlier.consecutive_failures = 0;
  options.outlier.max_ejected_percent = 100;
  auto servers = Make(options);
  FailResponses(*servers, 0, 100);
  EXPECT_TRUE(Server(*servers, 0).usable);
}

// ---- active health

BalancingOptions Checked(std::size_t count) {
  BalancingOptions options = Options(std::vector<unsigned>(count, 1), BalancingPolicy::kRoundRobin);
  HealthCheckOptions checks;
  checks.interval = 5s;
  checks.healthy_threshold = 2;
  checks.unhealthy_threshold = 3;
  options.health_check = checks;
  options.outlier.base_ejection_time = 10s;
  return options;
}

TEST_F(UpstreamServersTest, HealthChecksNeedTheirThresholdsInARow) {
  auto servers = Make(Checked(2));
  servers->OnHealthCheck(0, false, "failed: status 500");
  servers->OnHealthCheck(0, false, "failed: status 500");
  servers->OnHealthCheck(0, true, "passed: status 200");
  servers->OnHealthCheck(0, false, "failed: status 500");
  servers->OnHealthCheck(0, false, "failed: status 500");
  EXPECT_TRUE(Server(*servers, 0).usable);
  servers->OnHealthCheck(0, false, "failed: connect: Connection refused");
  UpstreamServers::ServerSnapshot server = Server(*servers, 0);
  EXPECT_FALSE(server.usable);
  EXPECT_FALSE(server.healthy);
  EXPECT_FALSE(server.ejected);
  EXPECT_EQ(server.reason, Unusable::kHealthCheck);
  EXPECT_EQ(server.last_check_result, "failed: connect: Connection refused");
  EXPECT_GT(server.last_check_unix_ms, 0);
  EXPECT_EQ(server.health_checks_failed, 5u);
  EXPECT_EQ(server.health_checks_passed, 1u);
  EXPECT_EQ(PickOne(*servers), 1u);
  servers->OnHealthCheck(0, true, "passed: status 200");
  servers->OnHealthCheck(0, false, "failed: status 500");
  servers->OnHealthCheck(0, true, "passed: status 200");
  EXPECT_FALSE(Server(*servers, 0).usable);
  servers->OnHealthCheck(0, true, "passed: status 200");
  EXPECT_TRUE(Server(*servers, 0).usable);
  EXPECT_EQ(Server(*servers, 0).reason, Unusable::kNo);
}

TEST_F(UpstreamServersTest, AnEjectedServerReturnsWhenItsTimeIsOverAndItsChecksPassed) {
  auto servers = Make(Checked(2));
  servers->OnConnectFailed(0, false);
  servers->OnConnectFailed(1, false);
  EXPECT_FALSE(Server(*servers, 0).healthy);
  // The checks run during the ejection: back after max(10 s left, 2 passes x 5 s).
  EXPECT_EQ(servers->RetryAfter(), 10s);
  now_ += 4s;
  servers->OnHealthCheck(0, true, "passed: status 200");
  EXPECT_EQ(servers->RetryAfter(), 6s);
  servers->OnHealthCheck(0, true, "passed: status 200");
  EXPECT_TRUE(Server(*servers, 0).healthy);
  EXPECT_FALSE(Server(*servers, 0).usable);  // passes do not shorten an ejection
  now_ += 6s;
  EXPECT_TRUE(Server(*servers, 0).usable);
  EXPECT_FALSE(Server(*servers, 1).usable);  // its time is over, its checks are not

  // Ejected again, no checks passed during it: still out after its time, for the checks.
  servers->OnConnectFailed(0, false);
  now_ += 20s;
  EXPECT_FALSE(Server(*servers, 0).usable);
  EXPECT_EQ(Server(*servers, 0).reason, Unusable::kHealthCheck);
  servers->OnHealthCheck(0, true, "passed: status 200");
  EXPECT_FALSE(Server(*servers, 0).usable);
  servers->OnHealthCheck(0, true, "passed: status 200");
  EXPECT_TRUE(Server(*servers, 0).usable);
}

TEST_F(UpstreamServersTest, RetryAfterCountsTheChecksStillNeeded) {
  auto servers = Make(Checked(1));
  for (int i = 0; i < 3; ++i) servers->OnHealthCheck(0, false, "failed: status 500");
  EXPECT_FALSE(servers->AnyUsable());
  EXPECT_EQ(servers->RetryAfter(), 10s);  // 2 passes x 5 s
  servers->OnHealthCheck(0, true, "passed: status 200");
  EXPECT_EQ(servers->RetryAfter(), 5s);
}

// ---- addresses

TEST_F(UpstreamServersTest, EndpointsStartEmptyAndAreSwapped) {
  auto servers = Make(Options({1, 1}, BalancingPolicy::kRoundRobin));
  const auto before = servers->endpoints(0);
  ASSERT_NE(before, nullptr);
  EXPECT_TRUE(before->empty());
  const boost::asio::ip::tcp::endpoint v4(boost::asio::ip::make_address("127.0.0.1"), 8080);
  const boost::asio::ip::tcp::endpoint v6(boost::asio::ip::make_address("::1"), 8080);
  servers->SetEndpoints(0, {v4, v6});
  EXPECT_TRUE(before->empty());  // a reader's copy stays as it was
  EXPECT_EQ(*servers->endpoints(0), (UpstreamServers::Endpoints{v4, v6}));
  EXPECT_TRUE(servers->endpoints(1)->empty());
  EXPECT_EQ(Server(*servers, 0).addresses,
            (std::vector<std::string>{"127.0.0.1:8080", "[::1]:8080"}));
  EXPECT_EQ(Server(*servers, 0).url, "http://10.0.0.1:8080");
}

}  // namespace
}  // namespace fencegate::adapters
