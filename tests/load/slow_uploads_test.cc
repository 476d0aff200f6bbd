// Slow uploads against the real binary (issue 25, item 4): admitted bodies that trickle in hold
// no relay buffer while they pause, all bodies together stay within limits.relay_buffer_memory
// (beyond it: 503, counted), and timeouts.write_deadline cuts a trickling write so that a newer
// token on its fence key is admitted.
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/admin_client.h"
#include "tests/support/eventually.h"
#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/recording_backend.h"
#include "tests/support/temp_dir.h"

namespace fencegate::integration {
namespace {

// Declared body size of a trickling upload: above the 64 KiB a refused request's body is
// drained before the answer, so a refusal is answered (and the connection closed) at once.
constexpr std::size_t kBodyBytes = 1 << 20;
constexpr auto kWait = std::chrono::seconds(40);

// Each upload costs the test 4 descriptors (socket and its io_context) and the gateway 2 or 3.
void RaiseDescriptorLimit() {
  rlimit limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  limit.rlim_cur = limit.rlim_max;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &limit), 0);
}

// A fenced PUT of kBodyBytes whose header and first body byte are sent at once; the rest waits
// for SendRest().
class TricklingUpload {
 public:
  bool Begin(std::uint16_t port, const std::string& target, int token) {
    if (!connection_.Connect(port)) return false;
    return connection_.WriteRaw(
        "PUT " + target + " HTTP/1.1\r\nHost: gateway\r\nFencing-Token: " + std::to_string(token) +
        "\r\nContent-Length: " + std::to_string(kBodyBytes) + "\r\n\r\nx");
  }
  bool SendRest() { return connection_.WriteRaw(std::string(kBodyBytes - 1, 'y')); }
  std::optional<Response> Read() { return connection_.ReadResponse(); }

 private:
  HttpConnection connection_{kWait};
};

class SlowUploadTest : public ::testing::Test {
 protected:
  // Two fenced routes: /kv/ to an http backend (fence key "kv:<segment 2>") and /files/ to a
  // filesystem backend (fence key "files:<path>"), on two network threads.
  GatewayConfig SlowUploadConfig() const {
    GatewayConfig config;
    config["access_log"]["path"] = "";
    config["threads"] = 2;
    config["timeouts"]["shutdown_drain"] = "1s";
    config.Backend("api") = HttpBackendAt(backend_.port());
    config.Backend("files") = FilesystemBackendAt(files_root_);
    config.Backend("files")["sync_writes"] = false;
    config.Route("kv", "/kv/", "api", "kv:{segment:2}");
    config.Route("files", "/files/", "files", "files:{path}");
    return config;
  }

  void StartGateway(const GatewayConfig& config) {
    RaiseDescriptorLimit();
    const std::string config_path = dir_.WriteFile("fencegate.yaml", config.Yaml());
    std::string error;
    gateway_ = GatewayInstance::Start(config_path, dir_.Join("data"), &error);
    ASSERT_NE(gateway_, nullptr) << error;
  }

  std::optional<double> Metric(const std::string& name, const std::string& labels = "") {
    return MetricValue(FetchMetricsText(gateway_->admin_port()), name, labels);
  }

  // Waits until `count` uploads wrote their first byte to their temp file in the filesystem
  // backend's root: the state in which each holds whatever buffer it took for its body.
  bool WaitForTempFilesWithBytes(std::size_t count) {
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    while (std::chrono::steady_clock::now() < deadline) {
      std::size_t with_bytes = 0;
      std::error_code ec;
      for (const auto& entry : std::filesystem::recursive_directory_iterator(files_root_, ec)) {
        if (entry.path().filename().string().starts_with(".fencegate-tmp-") &&
            entry.is_regular_file(ec) && entry.file_size(ec) > 0) {
          ++with_bytes;
        }
      }
      if (with_bytes >= count) return true;
      std::this_thread::yield();
    }
    return false;
  }

  std::uint64_t GatewayPeakRss() {
    return gateway_->process().PeakResidentBytes().value_or(~std::uint64_t{0});
  }

  TempDir dir_;
  RecordingBackend backend_;
  const std::string files_root_ = dir_.Join("files");
  std::unique_ptr<GatewayInstance> gateway_;  // declared last: stops before the backend
};

// 300 uploads to the http backend and 300 to the filesystem backend, all admitted, each having
// sent one byte of its 1 MiB body, then pausing. Before: the http adapter took a 256 KiB relay
// buffer per upload at admission and the filesystem adapter two zero-filled 256 KiB buffers
// (512 KiB resident per upload). Now neither holds a buffer while its body pauses.
TEST_F(SlowUploadTest, PausedUploadsHoldNoRelayBuffers) {
  ASSERT_NO_FATAL_FAILURE(StartGateway(SlowUploadConfig()));
  constexpr int kPerRoute = 300;
  // Warm up the gateway (its threads' arenas, the store, both adapters) before the baseline.
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(Fetch(gateway_->traffic_port(),
                    MakeRequest(http::verb::put, "/kv/warm" + std::to_string(i) + "/x",
                                {{"Fencing-Token", "1"}}, std::string(kBodyBytes, 'w')))
                  ->result_int(),
              200);
    ASSERT_EQ(Fetch(gateway_->traffic_port(),
                    MakeRequest(http::verb::put, "/files/warm" + std::to_string(i),
                                {{"Fencing-Token", "1"}}, std::string(kBodyBytes, 'w')))
                  ->result_int(),
              201);
  }
  const std::uint64_t baseline = GatewayPeakRss();

  std::vector<std::unique_ptr<TricklingUpload>> uploads;
  for (int i = 0; i < kPerRoute; ++i) {
    for (const std::string& target :
         {"/kv/item" + std::to_string(i) + "/x", "/files/item" + std::to_string(i)}) {
      uploads.push_back(std::make_unique<TricklingUpload>());
      ASSERT_TRUE(uploads.back()->Begin(gateway_->traffic_port(), target, 1)) << target;
    }
  }
  // Every upload relayed its first byte: the http ones reached the backend (the header goes
  // with the first body piece), the filesystem ones are in their temp files.
  ASSERT_TRUE(backend_.WaitForArrived(4 + kPerRoute, kWait));
  ASSERT_TRUE(WaitForTempFilesWithBytes(kPerRoute));
  const std::uint64_t grown = GatewayPeakRss() - baseline;
  RecordProperty("rss_growth_kib", static_cast<int>(grown / 1024));
  // A paused upload costs its connection state, not a relay buffer: well under the 256 KiB one
  // buffer took (600 uploads: 90 MB if each kept only its first relay buffer resident).
  EXPECT_LT(grown, kPerRoute * 2 * 64 * 1024ull)
      << "gateway RSS grew " << grown / 1024 << " KiB for " << 2 * kPerRoute << " paused uploads";
  EXPECT_EQ(Metric("fencegate_relay_buffer_refusals_total"), 0.0);

  for (auto& upload : uploads) ASSERT_TRUE(upload->SendRest());
  for (std::size_t i = 0; i < uploads.size(); ++i) {
    const std::optional<Response> response = uploads[i]->Read();
    ASSERT_TRUE(response.has_value()) << "upload " << i;
    EXPECT_EQ(response->result_int(), i % 2 == 0 ? 200 : 201) << "upload " << i;
  }
  // An exchange hands its buffer back once it ends, which may be just after its client read the
  // response: wait for the gauge to come down rather than race it.
  EXPECT_TRUE(Eventually([&] { return Metric("fencegate_relay_buffer_reserved_bytes") == 0.0; }))
      << Metric("fencegate_relay_buffer_reserved_bytes").value_or(-1);
}

// limits.relay_buffer_memory of 16 MiB holds 64 bodies of the http adapter (one 256 KiB buffer
// each): the 65th and later bodies in progress at the same time get 503 problem+json with
// Retry-After, counted in fencegate_relay_buffer_refusals_total, and once the admitted bodies
// end their memory serves new ones.
TEST_F(SlowUploadTest, BodiesBeyondTheRelayBudgetGet503) {
  GatewayConfig config = SlowUploadConfig();
  config["limits"]["relay_buffer_memory"] = "16MiB";
  ASSERT_NO_FATAL_FAILURE(StartGateway(config));
  constexpr std::size_t kUploads = 100;
  constexpr std::size_t kFitting = 64;
  EXPECT_EQ(Metric("fencegate_relay_buffer_limit_bytes"), 16.0 * 1024 * 1024);

  std::vector<std::unique_ptr<TricklingUpload>> uploads;
  for (std::size_t i = 0; i < kUploads; ++i) {
    uploads.push_back(std::make_unique<TricklingUpload>());
    ASSERT_TRUE(
        uploads.back()->Begin(gateway_->traffic_port(), "/kv/item" + std::to_string(i) + "/x", 1));
  }
  ASSERT_TRUE(backend_.WaitForArrived(kFitting, kWait));

  // The refused ones are answered at once; the others are still sending.
  std::vector<std::size_t> fitting;
  std::size_t refused = 0;
  {
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    while (Metric("fencegate_relay_buffer_refusals_total") != double(kUploads - kFitting) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
  }
  EXPECT_EQ(Metric("fencegate_relay_buffer_refusals_total"), double(kUploads - kFitting));
  EXPECT_EQ(Metric("fencegate_relay_buffer_reserved_bytes"), 16.0 * 1024 * 1024);
  EXPECT_EQ(backend_.Requests().size(), kFitting);
  for (std::size_t i = 0; i < kUploads; ++i) {
    // An admitted upload's rest goes out first; a refused one's connection is closed (the
    // write may fail), and its answer is already there.
    if (!uploads[i]->SendRest()) {
      const std::optional<Response> response = uploads[i]->Read();
      ASSERT_TRUE(response.has_value()) << "upload " << i;
      EXPECT_EQ(response->result_int(), 503);
      ++refused;
      continue;
    }
    const std::optional<Response> response = uploads[i]->Read();
    ASSERT_TRUE(response.has_value()) << "upload " << i;
    if (response->result_int() == 503) {
      EXPECT_NE(response->body().find("relay-memory-exhausted"), std::string::npos)
          << response->body();
      EXPECT_EQ((*response)[http::field::content_type], "application/problem+json");
      EXPECT_EQ((*response)[http::field::retry_after], "1");
      ++refused;
    } else {
      EXPECT_EQ(response->result_int(), 200) << response->body();
      fitting.push_back(i);
    }
  }
  EXPECT_EQ(refused, kUploads - kFitting);
  EXPECT_EQ(fitting.size(), kFitting);
  EXPECT_TRUE(Eventually([&] { return Metric("fencegate_relay_buffer_reserved_bytes") == 0.0; }))
      << Metric("fencegate_relay_buffer_reserved_bytes").value_or(-1);

  // The memory is free again: a new body is relayed.
  EXPECT_EQ(Fetch(gateway_->traffic_port(),
                  MakeRequest(http::verb::put, "/kv/after/x", {{"Fencing-Token", "1"}}, "after"))
                ->result_int(),
            200);
  EXPECT_EQ(Metric("fencegate_relay_buffer_refusals_total"), double(kUploads - kFitting));
}

// A write admitted with token 5 that trickles its body would hold token 6 on the same fence
// key at the advance barrier for as long as it trickles (here up to barrier_wait, then 503).
// timeouts.write_deadline cuts it: its client gets 408, the backend never gets its whole body,
// and token 6 is admitted.
TEST_F(SlowUploadTest, WriteDeadlineCutsATricklingWriteAndAdmitsTheNewerToken) {
  GatewayConfig config = SlowUploadConfig();
  config["timeouts"]["write_deadline"] = "1s";
  config["timeouts"]["barrier_wait"] = "20s";
  ASSERT_NO_FATAL_FAILURE(StartGateway(config));

  TricklingUpload older;
  ASSERT_TRUE(older.Begin(gateway_->traffic_port(), "/kv/doc/a", 5));
  ASSERT_TRUE(backend_.WaitForArrived(1, kWait));  // admitted and relaying
  const std::optional<Response> newer =
      Fetch(gateway_->traffic_port(),
            MakeRequest(http::verb::put, "/kv/doc/b", {{"Fencing-Token", "6"}}, "six"));
  ASSERT_TRUE(newer.has_value());
  EXPECT_EQ(newer->result_int(), 200) << newer->body();

  const std::optional<Response> cut = older.Read();
  ASSERT_TRUE(cut.has_value());
  EXPECT_EQ(cut->result_int(), 408);
  EXPECT_NE(cut->body().find("write-deadline-exceeded"), std::string::npos) << cut->body();

  ASSERT_TRUE(backend_.WaitForCompleted(1, kWait));
  const std::vector<RecordedRequest> seen = backend_.Requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_LT(seen[0].body_bytes, kBodyBytes) << "the cut write's whole body reached the backend";
  EXPECT_EQ(seen[1].body_prefix, "six");
}

// The same on the filesystem backend: the cut write leaves no file, the newer one is stored.
TEST_F(SlowUploadTest, WriteDeadlineCutsATricklingFileWrite) {
  GatewayConfig config = SlowUploadConfig();
  config["timeouts"]["write_deadline"] = "1s";
  config["timeouts"]["barrier_wait"] = "20s";
  ASSERT_NO_FATAL_FAILURE(StartGateway(config));

  TricklingUpload older;
  ASSERT_TRUE(older.Begin(gateway_->traffic_port(), "/files/doc", 5));
  ASSERT_TRUE(WaitForTempFilesWithBytes(1));  // admitted and writing
  const std::optional<Response> newer =
      Fetch(gateway_->traffic_port(),
            MakeRequest(http::verb::put, "/files/doc", {{"Fencing-Token", "6"}}, "six"));
  ASSERT_TRUE(newer.has_value());
  EXPECT_EQ(newer->result_int(), 201) << newer->body();

  const std::optional<Response> cut = older.Read();
  ASSERT_TRUE(cut.has_value());
  EXPECT_EQ(cut->result_int(), 408);

  const std::optional<Response> stored =
      Fetch(gateway_->traffic_port(), MakeRequest(http::verb::get, "/files/doc"));
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->body(), "six");
}

}  // namespace
}  // namespace fencegate::integration
