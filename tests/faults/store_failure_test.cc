// The fence store's disk fails under a running fencegate: it fills up (a size-limited tmpfs) or
// the kernel forces it read-only (ext4 with errors=remount-ro after a file system error).
// What must hold, end to end through the binary:
//   - a write that needs a token advance fails closed: 503 problem+json (store-error,
//     Retry-After), never forwarded, with a line in the gateway's error log;
//   - /readyz answers 503 (store_ready false) and fencegate_store_ready is 0;
//   - a write at the current highest token needs no store write, so it is still admitted, and
//     reads and stale refusals (409) work as before;
//   - once the disk takes writes again the gateway recovers by itself, without a restart, and
//     what it acknowledges afterwards survives kill -9.
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

#include "tests/faults/scoped_mount.h"
#include "tests/support/admin_client.h"
#include "tests/support/eventually.h"
#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/recording_backend.h"
#include "tests/support/temp_dir.h"

namespace fencegate::faults {
namespace {

using namespace integration;

constexpr std::size_t kTmpfsBytes = 8u << 20;
constexpr std::size_t kExt4Bytes = 32u << 20;
// Bounds the advances it may take to use up the last partly filled page of the full disk.
constexpr int kMaxAdvancesUntilFull = 5000;

class StoreFailureTest : public ::testing::Test {
 protected:
  void SetUp() override { std::filesystem::create_directory(disk_); }

  void StartGateway() {
    GatewayConfig config = GatewayConfig::HttpBackend(backend_.port(), dir_.Join("access.log"));
    config.Backend("api")["forward_token_header"] = "Fencing-Token";
    config_ = dir_.WriteFile("fencegate.yaml", config.Yaml());
    std::string error;
    gateway_ = GatewayInstance::Start(config_, disk_ + "/data", &error);
    ASSERT_NE(gateway_, nullptr) << error;
  }

  Response Send(http::verb method, const std::string& target, std::optional<std::uint64_t> token) {
    Request request = MakeRequest(method, target, {}, method == http::verb::get ? "" : "data");
    if (token) request.set("Fencing-Token", std::to_string(*token));
    std::string error;
    std::optional<Response> response = Fetch(gateway_->traffic_port(), std::move(request), &error);
    if (!response) {
      ADD_FAILURE() << "request failed: " << error;
      Response failed;
      failed.result(0);
      return failed;
    }
    return *response;
  }
  Response Put(const std::string& target, std::uint64_t token) {
    return Send(http::verb::put, target, token);
  }

  std::uint64_t Highest(const std::string& fence_key) {
    std::string error;
    auto state = FetchAdminJson(gateway_->admin_port(), "/admin/fences/" + fence_key, &error);
    EXPECT_TRUE(state.has_value()) << error;
    return state ? state->as_object().at("highest_token").to_number<std::uint64_t>() : 0;
  }

  int ReadyStatus() {
    std::optional<Response> response =
        Fetch(gateway_->admin_port(), MakeRequest(http::verb::get, "/readyz"));
    return response ? response->result_int() : 0;
  }

  std::optional<double> StoreReadyMetric() {
    return MetricValue(FetchMetricsText(gateway_->admin_port()), "fencegate_store_ready", "");
  }

  // Whether the backend ever received a write carrying `token`.
  bool Forwarded(std::uint64_t token) {
    for (const RecordedRequest& request : backend_.Requests()) {
      if (request.headers["Fencing-Token"] == std::to_string(token)) return true;
    }
    return false;
  }

  // The answer to an advance the store could not make durable.
  void ExpectStoreErrorProblem(const Response& response, std::uint64_t token) {
    EXPECT_EQ(response.result_int(), 503);
    EXPECT_EQ(response[http::field::content_type], "application/problem+json");
    EXPECT_EQ(response[http::field::retry_after], "1");
    boost::json::value body = boost::json::parse(response.body());
    EXPECT_EQ(body.at("type").as_string(), "https://fencegate.dev/problems/store-error");
    EXPECT_EQ(body.at("status").to_number<int>(), 503);
    EXPECT_EQ(body.at("presented_token").to_number<std::uint64_t>(), token);
    EXPECT_FALSE(Forwarded(token)) << "a write the store refused reached the backend";
  }

  // While the store is failed: not ready, and everything that needs no store write works.
  void ExpectDegradedButServing(std::uint64_t current) {
    EXPECT_EQ(ReadyStatus(), 503);
    EXPECT_EQ(StoreReadyMetric(), 0.0);
    EXPECT_TRUE(gateway_->process().WaitForStderr(
        R"("level":"error","msg":"fence store write failed)", std::chrono::seconds(10)))
        << gateway_->process().Stderr();

    Response same = Put("/kv/a/x", current);
    EXPECT_EQ(same.result_int(), 200) << "a write at the current token needs no store write";
    EXPECT_TRUE(Forwarded(current));
    EXPECT_EQ(Put("/kv/b/x", 1).result_int(), 200) << "another fence at its current token";
    EXPECT_EQ(Put("/kv/a/x", current - 1).result_int(), 409) << "stale tokens are still refused";
    EXPECT_EQ(Send(http::verb::get, "/kv/a/x", std::nullopt).result_int(), 200) << "reads";
    EXPECT_EQ(Highest("kv:a"), current) << "the refused advance is not durable";
    ExpectStoreErrorProblem(Put("/kv/a/x", current + 1000), current + 1000);
  }

  // Polls /readyz until the gateway reports the store ready again; the time it took.
  std::optional<std::chrono::milliseconds> WaitUntilReady() {
    const auto start = std::chrono::steady_clock::now();
    if (!Eventually([&] { return ReadyStatus() == 200; }, std::chrono::seconds(30))) {
      return std::nullopt;
    }
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start);
  }

  // After recovery: advances work again, are logged as recovered, and survive kill -9.
  void ExpectRecovered(std::uint64_t token) {
    EXPECT_EQ(StoreReadyMetric(), 1.0);
    const std::string log = gateway_->process().Stderr();
    EXPECT_NE(log.find(R"("level":"info","msg":"fence store recovered)"), std::string::npos) << log;
    ASSERT_EQ(Put("/kv/a/x", token).result_int(), 200);
    gateway_->process().Signal(SIGKILL);
    ASSERT_EQ(gateway_->process().Wait(std::chrono::seconds(10)), 128 + SIGKILL);
    gateway_.reset();
    std::string error;
    gateway_ = GatewayInstance::Start(config_, disk_ + "/data", &error);
    ASSERT_NE(gateway_, nullptr) << error;
    EXPECT_EQ(Highest("kv:a"), token) << "an advance acknowledged after recovery was lost";
  }

  TempDir dir_;
  const std::string disk_ = dir_.Join("disk");
  RecordingBackend backend_;
  std::string config_;
  std::unique_ptr<ScopedMount> mount_;        // unmounted after the gateway is stopped...
  std::unique_ptr<GatewayInstance> gateway_;  // ...because it is declared (so destroyed) later
};

TEST_F(StoreFailureTest, FullDiskFailsAdvancesClosedAndRecoversWhenSpaceReturns) {
  std::string error;
  mount_ = ScopedMount::Tmpfs(disk_, kTmpfsBytes, &error);
  if (!mount_) GTEST_SKIP() << "cannot mount a size-limited tmpfs (needs root): " << error;
  StartGateway();
  ASSERT_EQ(Put("/kv/a/x", 1).result_int(), 200);
  ASSERT_EQ(Put("/kv/b/x", 1).result_int(), 200);

  const long long filler = FillUp(disk_ + "/filler", &error);
  ASSERT_GT(filler, 0) << error;
  // Advances already on the write-ahead log's last page can still be made durable; the first
  // one that needs a new page fails.
  std::uint64_t acknowledged = 1;
  std::optional<Response> refused;
  for (std::uint64_t token = 2; token < kMaxAdvancesUntilFull && !refused; ++token) {
    Response response = Put("/kv/a/x", token);
    if (response.result_int() == 200) {
      acknowledged = token;
    } else {
      ASSERT_EQ(response.result_int(), 503) << response.body();
      ExpectStoreErrorProblem(response, token);
      refused = response;
    }
  }
  ASSERT_TRUE(refused.has_value()) << "the disk filled up but advances kept succeeding";
  ExpectDegradedButServing(acknowledged);

  std::filesystem::remove(disk_ + "/filler");
  const auto recovery = WaitUntilReady();
  ASSERT_TRUE(recovery.has_value()) << "not ready 30 s after space returned";
  std::cout << "disk full: " << acknowledged - 1 << " advances fit on the full disk; ready again "
            << recovery->count() << " ms after the filler was deleted" << std::endl;
  ExpectRecovered(acknowledged + 2000);
}

TEST_F(StoreFailureTest, ReadOnlyDiskFailsAdvancesClosed) {
  std::string error;
  mount_ = ScopedMount::LoopExt4(disk_, dir_.Join("disk.img"), kExt4Bytes, &error);
  if (!mount_)
    GTEST_SKIP() << "cannot loop-mount an ext4 image (needs root and loop devices): " << error;
  StartGateway();
  ASSERT_EQ(Put("/kv/a/x", 1).result_int(), 200);
  ASSERT_EQ(Put("/kv/b/x", 1).result_int(), 200);
  ASSERT_EQ(Put("/kv/a/x", 2).result_int(), 200);

  if (!mount_->TriggerError(&error)) GTEST_SKIP() << "cannot make ext4 fail: " << error;
  ExpectStoreErrorProblem(Put("/kv/a/x", 3), 3);
  ExpectDegradedButServing(2);

  // Linux 6.x keeps an ext4 file system that an error forced read-only ("emergency_ro") that
  // way until it is unmounted; older kernels let a remount lift it. Either way the gateway must
  // follow the disk: recover if it takes writes again, keep failing closed if it does not.
  const bool remounted = mount_->RemountReadWrite(&error);
  if (remounted && Writable(disk_)) {
    const auto recovery = WaitUntilReady();
    ASSERT_TRUE(recovery.has_value()) << "not ready 30 s after the remount";
    std::cout << "read-only: ready again " << recovery->count() << " ms after remount rw"
              << std::endl;
    ExpectRecovered(5000);
  } else {
    std::cout << "read-only: the kernel keeps the file system read-only after remount rw ("
              << (remounted ? "remount accepted, writes still fail" : error)
              << "); checking that the gateway keeps failing closed" << std::endl;
    // The clock is the subject: the store keeps failing over several resume attempts (each
    // resume_retry apart), which nothing reports one by one.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    EXPECT_EQ(ReadyStatus(), 503);
    ExpectStoreErrorProblem(Put("/kv/a/x", 4), 4);
    EXPECT_EQ(Put("/kv/a/x", 2).result_int(), 200);
    EXPECT_EQ(Highest("kv:a"), 2u);
  }
}

}  // namespace
}  // namespace fencegate::faults
