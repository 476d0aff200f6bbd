#include <signal.h>

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/admin_client.h"
#include "tests/support/eventually.h"
#include "tests/support/http_gateway_fixture.h"

namespace fencegate::integration {
namespace {

using CrashRecoveryTest = HttpGatewayTest;

constexpr int kKeys = 4;
constexpr int kWriters = 4;

// A token the gateway acknowledged (2xx) must survive kill -9: after a restart on the same data
// directory, the fence's highest token is at least every acknowledged token.
TEST_F(CrashRecoveryTest, AcknowledgedTokensSurviveKillNine) {
  std::atomic<std::uint64_t> next_token{1};
  std::atomic<bool> stop{false};
  std::mutex acknowledged_mutex;
  std::array<std::uint64_t, kKeys> acknowledged{};  // highest 2xx token per key
  std::atomic<int> acknowledged_count{0};

  std::uint16_t port = gateway_->traffic_port();
  std::vector<std::thread> writers;
  for (int writer = 0; writer < kWriters; ++writer) {
    writers.emplace_back([&, writer] {
      std::unique_ptr<HttpConnection> connection;
      for (int i = 0; !stop.load(); ++i) {
        if (!connection) {
          connection = std::make_unique<HttpConnection>(std::chrono::seconds(3));
          if (!connection->Connect(port)) {
            connection.reset();
            // A pause between reconnects, not a wait on state: the gateway is being killed.
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            continue;
          }
        }
        int key = (writer + i) % kKeys;
        std::uint64_t token = next_token.fetch_add(1);
        std::optional<Response> response = connection->RoundTrip(
            MakeRequest(http::verb::put, "/kv/k" + std::to_string(key) + "/v",
                        {{"Fencing-Token", std::to_string(token)}}, "payload"));
        if (!response || !response->keep_alive()) connection.reset();
        if (response && response->result_int() / 100 == 2) {
          std::lock_guard lock(acknowledged_mutex);
          acknowledged[key] = std::max(acknowledged[key], token);
          ++acknowledged_count;
        }
      }
    });
  }
  // Let the storm run, then kill the gateway in the middle of it (after 200 acknowledged
  // writes, or after 2 s on a machine too busy for that).
  Eventually([&] { return acknowledged_count.load() >= 200; }, std::chrono::seconds(2));
  gateway_->process().Signal(SIGKILL);
  EXPECT_EQ(gateway_->process().Wait(std::chrono::seconds(10)), 128 + SIGKILL);
  stop = true;
  for (std::thread& writer : writers) writer.join();
  ASSERT_GT(acknowledged_count.load(), 0);

  gateway_.reset();
  std::string error;
  gateway_ = GatewayInstance::Start(config_path_, dir_.Join("data"), &error);
  ASSERT_NE(gateway_, nullptr) << error;

  for (int key = 0; key < kKeys; ++key) {
    const std::string fence = "kv:k" + std::to_string(key);
    std::optional<boost::json::value> state =
        FetchAdminJson(gateway_->admin_port(), "/admin/fences/" + fence, &error);
    if (acknowledged[key] == 0) continue;
    ASSERT_TRUE(state.has_value()) << fence << ": " << error;
    std::uint64_t highest = state->as_object().at("highest_token").to_number<std::uint64_t>();
    EXPECT_GE(highest, acknowledged[key]) << fence;
    Response stale = Put("/kv/k" + std::to_string(key) + "/v", std::to_string(highest - 1));
    EXPECT_EQ(stale.result_int(), 409) << fence;
  }
}

}  // namespace
}  // namespace fencegate::integration
