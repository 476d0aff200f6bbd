// kill -9 in a loop: fencegate is killed at random moments while clients advance tokens on a
// few shared fence keys, and restarted on the same data directory each time. Checked after
// every restart and at the end:
//   - every token acknowledged (2xx) before a kill is still covered: the durable highest token
//     (admin API) is >= it;
//   - no fence's highest token ever went backwards from one restart to the next;
//   - the backend never applied a lower token after a higher one on the same resource, every
//     acknowledged write reached it, and no refused (409) write did.
#include <signal.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/admin_client.h"
#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/recording_backend.h"
#include "tests/support/temp_dir.h"

namespace fencegate::faults {
namespace {

using namespace integration;

constexpr int kKills = 100;
constexpr int kKeys = 4;
constexpr int kWriters = 4;
// How long the load runs before each kill, drawn uniformly: long enough for many group-commit
// rounds, short enough for the whole loop to stay well under a minute.
constexpr int kMinLoadMs = 5;
constexpr int kMaxLoadMs = 200;

std::uint64_t Seed() {
  if (const char* given = std::getenv("FENCEGATE_FAULTS_SEED")) return std::stoull(given);
  return std::random_device{}();
}

std::string Target(int key) { return "/kv/k" + std::to_string(key) + "/item"; }
std::string FenceKey(int key) { return "kv:k" + std::to_string(key); }

// What every writer saw, shared by all of them.
struct Ledger {
  std::mutex mutex;
  std::array<std::uint64_t, kKeys> acknowledged{};  // highest 2xx token per key, all runs
  std::set<std::string> acknowledged_ids;           // X-Request-Id of every 2xx
  std::set<std::string> refused_ids;                // X-Request-Id of every 409
  std::uint64_t sent = 0, acked = 0, acked_advances = 0, stale = 0, unavailable = 0, cut = 0;
};

// One writer: PUTs on random keys until `stop`, a mix of advances (a fresh token, above every
// token handed out so far), writes at the last acknowledged token, and zombies presenting an
// older one. Reconnects when the gateway dies under it.
void Write(std::uint16_t port, std::uint64_t seed, std::atomic<std::uint64_t>& next_token,
           const std::atomic<bool>& stop, Ledger& ledger) {
  std::mt19937_64 random(seed);
  std::unique_ptr<HttpConnection> connection;
  while (!stop.load()) {
    if (!connection) {
      connection = std::make_unique<HttpConnection>(std::chrono::seconds(5));
      if (!connection->Connect(port)) {
        connection.reset();
        // A pause between reconnects, not a wait on state: the gateway is being killed.
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        continue;
      }
    }
    const int key = static_cast<int>(random() % kKeys);
    const int mode = static_cast<int>(random() % 10);  // 0-5 advance, 6-7 current, 8-9 zombie
    std::uint64_t token;
    {
      std::lock_guard lock(ledger.mutex);
      token = ledger.acknowledged[key];
    }
    const bool advance = mode < 6 || token == 0;
    if (advance) {
      token = next_token.fetch_add(1);
    } else if (mode >= 8) {
      token -= std::min<std::uint64_t>(token - 1, 1 + random() % 3);
    }
    std::optional<Response> response = connection->RoundTrip(MakeRequest(
        http::verb::put, Target(key), {{"Fencing-Token", std::to_string(token)}}, "payload"));
    if (!response || !response->keep_alive()) connection.reset();
    std::lock_guard lock(ledger.mutex);
    ++ledger.sent;
    if (!response) {
      ++ledger.cut;
      continue;
    }
    const std::string id(response->base()["X-Request-Id"]);
    const int status = response->result_int();
    if (status / 100 == 2) {
      ++ledger.acked;
      ledger.acked_advances += advance;
      ledger.acknowledged[key] = std::max(ledger.acknowledged[key], token);
      ledger.acknowledged_ids.insert(id);
    } else if (status == 409) {
      ++ledger.stale;
      ledger.refused_ids.insert(id);
    } else {
      ++ledger.unavailable;  // 503 while the store was being closed by the kill, or similar
    }
  }
}

TEST(CrashLoopTest, AcknowledgedAdvancesSurviveRepeatedKillNine) {
  const std::uint64_t seed = Seed();
  std::cout << "crash loop seed " << seed << " (rerun with FENCEGATE_FAULTS_SEED=" << seed << ")"
            << std::endl;
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  std::mt19937_64 random(seed);

  TempDir dir;
  RecordingBackend backend;
  GatewayConfig gateway_config = GatewayConfig::HttpBackend(backend.port(), "/dev/null");
  gateway_config.Backend("api")["forward_token_header"] = "Fencing-Token";
  const std::string config = dir.WriteFile("fencegate.yaml", gateway_config.Yaml());
  const std::string data_dir = dir.Join("data");

  Ledger ledger;
  std::atomic<std::uint64_t> next_token{1};
  std::array<std::uint64_t, kKeys> seen_highest{};  // durable highest at the previous restart
  std::uint64_t checks = 0;

  // Every restart: each fence covers every acknowledged token and did not go backwards.
  auto check_fences = [&](GatewayInstance& gateway, int restart) {
    for (int key = 0; key < kKeys; ++key) {
      std::uint64_t floor;
      {
        std::lock_guard lock(ledger.mutex);
        floor = std::max(ledger.acknowledged[key], seen_highest[key]);
      }
      if (floor == 0) continue;  // never fenced yet
      std::string error;
      auto state = FetchAdminJson(gateway.admin_port(), "/admin/fences/" + FenceKey(key), &error);
      ASSERT_TRUE(state.has_value())
          << "restart " << restart << ", " << FenceKey(key) << " (tokens up to " << floor
          << " were acknowledged): " << error;
      const auto highest = state->as_object().at("highest_token").to_number<std::uint64_t>();
      EXPECT_GE(highest, ledger.acknowledged[key])
          << "restart " << restart << ": an acknowledged token on " << FenceKey(key) << " was lost";
      EXPECT_GE(highest, seen_highest[key]) << "restart " << restart << ": the highest token of "
                                            << FenceKey(key) << " went backwards";
      seen_highest[key] = std::max(seen_highest[key], highest);
      ++checks;
    }
  };

  const auto started = std::chrono::steady_clock::now();
  int kills = 0;
  for (int round = 0; round < kKills; ++round) {
    std::string error;
    std::unique_ptr<GatewayInstance> gateway = GatewayInstance::Start(config, data_dir, &error);
    ASSERT_NE(gateway, nullptr) << "restart " << round << ": " << error;
    check_fences(*gateway, round);
    if (HasFatalFailure()) return;

    std::atomic<bool> stop{false};
    std::vector<std::thread> writers;
    for (int writer = 0; writer < kWriters; ++writer) {
      writers.emplace_back(Write, gateway->traffic_port(), random(), std::ref(next_token),
                           std::cref(stop), std::ref(ledger));
    }
    // The subject: load for a random time, then kill -9 wherever the writes happen to be.
    std::this_thread::sleep_for(std::chrono::milliseconds(
        kMinLoadMs + static_cast<int>(random() % (kMaxLoadMs - kMinLoadMs + 1))));
    gateway->process().Signal(SIGKILL);
    ASSERT_EQ(gateway->process().Wait(std::chrono::seconds(10)), 128 + SIGKILL);
    ++kills;
    stop = true;
    for (std::thread& writer : writers) writer.join();
    // Whatever the dead gateway had sent is parsed before its connections' close is seen, so
    // the backend's log is complete for this round before the next gateway can add to it.
    ASSERT_TRUE(backend.WaitForConnectionsClosed(std::chrono::seconds(10)));
  }
  std::string error;
  std::unique_ptr<GatewayInstance> gateway = GatewayInstance::Start(config, data_dir, &error);
  ASSERT_NE(gateway, nullptr) << error;
  check_fences(*gateway, kKills);
  // And the restarted gateway refuses what is below each fence.
  for (int key = 0; key < kKeys; ++key) {
    if (seen_highest[key] < 2) continue;
    std::optional<Response> stale =
        Fetch(gateway->traffic_port(),
              MakeRequest(http::verb::put, Target(key),
                          {{"Fencing-Token", std::to_string(seen_highest[key] - 1)}}, "zombie"),
              &error);
    ASSERT_TRUE(stale.has_value()) << error;
    EXPECT_EQ(stale->result_int(), 409) << FenceKey(key);
  }
  gateway.reset();

  // The backend's history: per resource, tokens applied (completed) never went down.
  std::vector<RecordedRequest> requests = backend.Requests();
  std::sort(requests.begin(), requests.end(),
            [](const RecordedRequest& a, const RecordedRequest& b) {
              return a.completion < b.completion;
            });
  std::map<std::string, std::uint64_t> applied_highest;
  std::set<std::string> applied_ids;
  std::uint64_t applied = 0, violations = 0;
  for (const RecordedRequest& request : requests) {
    if (request.completion == 0) continue;  // cut off mid-body by a kill: never applied
    ++applied;
    applied_ids.insert(std::string(request.headers["X-Request-Id"]));
    const std::uint64_t token = std::stoull(std::string(request.headers["Fencing-Token"]));
    std::uint64_t& highest = applied_highest[request.target];
    if (token < highest) {
      ++violations;
      ADD_FAILURE() << request.target << ": token " << token << " applied after " << highest;
    }
    highest = std::max(highest, token);
  }
  std::uint64_t lost = 0, leaked = 0;
  for (const std::string& id : ledger.acknowledged_ids) lost += applied_ids.count(id) == 0;
  for (const std::string& id : ledger.refused_ids) leaked += applied_ids.count(id) != 0;
  EXPECT_EQ(lost, 0u) << "acknowledged writes the backend never applied";
  EXPECT_EQ(leaked, 0u) << "refused writes the backend applied";
  EXPECT_EQ(violations, 0u);

  const auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << "crash loop: " << kills << " kills in " << seconds << " s; " << ledger.sent
            << " writes sent, " << ledger.acked << " acknowledged (" << ledger.acked_advances
            << " advances), " << ledger.stale << " refused stale, " << ledger.unavailable
            << " other refusals, " << ledger.cut << " cut by a kill; " << applied
            << " applied at the backend; " << checks << " fence checks after restarts; "
            << violations << " violations" << std::endl;
  EXPECT_EQ(kills, kKills);
  EXPECT_GT(ledger.acked_advances, static_cast<std::uint64_t>(kKills));
}

}  // namespace
}  // namespace fencegate::faults
