// README "Filesystem backends": the temp file of a write that never commits is removed, whether
// the upload was cut by its client, by the body timeout or by a drain, and the temp files a
// kill -9 left are swept at the next start, while the locked temp file of a write still running
// (here: in another gateway sharing the root) is left alone.

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/lock_test_support.h"
#include "tests/support/temp_dir.h"

namespace fencegate::integration {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kUploadBytes = 1 << 20;
constexpr std::size_t kFirstPart = 200 * 1024;  // sent before the upload stalls

// Every file named like a temp file under `root`, at any depth (symlinks included).
std::vector<fs::path> TempFiles(const fs::path& root) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->path().filename().string().starts_with(".fencegate-tmp-")) found.push_back(it->path());
  }
  return found;
}

// A PUT whose body stops after its first part: the upload is in progress, its temp file
// written, until the test cuts it or sends the rest.
class StalledUpload {
 public:
  StalledUpload(std::uint16_t port, const std::string& target)
      : connection_(std::chrono::seconds(20)) {
    EXPECT_TRUE(connection_.Connect(port)) << connection_.error();
    EXPECT_TRUE(connection_.WriteRaw("PUT " + target +
                                     " HTTP/1.1\r\nHost: x\r\nFencing-Token: 1\r\n"
                                     "Content-Length: " +
                                     std::to_string(kUploadBytes) + "\r\n\r\n" +
                                     std::string(kFirstPart, 'a')))
        << connection_.error();
  }

  std::optional<Response> Finish() {
    if (!connection_.WriteRaw(std::string(kUploadBytes - kFirstPart, 'a'))) return std::nullopt;
    return connection_.ReadResponse();
  }

  HttpConnection& connection() { return connection_; }

 private:
  HttpConnection connection_;
};

class TempFileCleanupTest : public ::testing::Test {
 protected:
  // A filesystem route /files/ over root_.
  GatewayConfig FilesConfig() const {
    GatewayConfig config;
    config.Backend("files") = FilesystemBackendAt(root_.string());
    config.Route("files", "/files/", "files", "files:{path}");
    return config;
  }

  std::unique_ptr<GatewayInstance> Start(const std::string& name) {
    return Start(name, FilesConfig());
  }
  std::unique_ptr<GatewayInstance> Start(const std::string& name, const GatewayConfig& config) {
    std::string error;
    auto gateway = GatewayInstance::Start(dir_.WriteFile(name + ".yaml", config.Yaml()),
                                          dir_.Join(name), &error);
    EXPECT_NE(gateway, nullptr) << error;
    return gateway;
  }

  // Waits until the uploads in progress have created `count` temp files.
  bool WaitForTempFiles(std::size_t count) {
    return Eventually([&] { return TempFiles(root_).size() == count; });
  }

  TempDir dir_;
  const fs::path root_ = dir_.Join("files");
};

TEST_F(TempFileCleanupTest, TempFilesLeftByKillNineAreRemovedAtTheNextStart) {
  auto gateway = Start("gateway");
  ASSERT_NE(gateway, nullptr);
  StalledUpload top(gateway->traffic_port(), "/files/top.bin");
  StalledUpload nested(gateway->traffic_port(), "/files/a/b/nested.bin");
  ASSERT_TRUE(WaitForTempFiles(2)) << TempFiles(root_).size();
  gateway->process().Signal(SIGKILL);
  ASSERT_TRUE(gateway->process().Wait(std::chrono::seconds(10)).has_value());
  ASSERT_EQ(TempFiles(root_).size(), 2u);

  // Look-alikes that are not the adapter's temp files stay: another name, a symlink (to a file
  // outside the root, which must not be touched either), a token sidecar.
  const std::string outside = dir_.WriteFile("outside.txt", "outside");
  fs::create_symlink(outside, root_ / ".fencegate-tmp-0123456789abcdef");
  { std::ofstream(root_ / ".fencegate-tmp-not-ours") << "x"; }
  { std::ofstream(root_ / "a" / ".fencegate-meta.kept") << "7"; }

  gateway = Start("gateway");
  ASSERT_NE(gateway, nullptr);
  ASSERT_TRUE(gateway->process().WaitForStderr("removed 2 temp files of cut writes",
                                               std::chrono::seconds(20)))
      << gateway->process().Stderr();
  const std::vector<fs::path> left = TempFiles(root_);
  ASSERT_EQ(left.size(), 2u);
  for (const fs::path& path : left) {
    EXPECT_TRUE(path.filename() == ".fencegate-tmp-0123456789abcdef" ||
                path.filename() == ".fencegate-tmp-not-ours")
        << path;
  }
  EXPECT_EQ(ReadWholeFile(outside), "outside");
  EXPECT_TRUE(fs::exists(root_ / "a" / ".fencegate-meta.kept"));
  EXPECT_FALSE(fs::exists(root_ / "top.bin"));

  // The restarted gateway writes and reads as ever.
  std::optional<Response> written = Fetch(
      gateway->traffic_port(),
      MakeRequest(http::verb::put, "/files/a/b/nested.bin", {{"Fencing-Token", "2"}}, "after"));
  ASSERT_TRUE(written);
  EXPECT_EQ(written->result_int(), 201) << written->body();
}

TEST_F(TempFileCleanupTest, TheSweepLeavesTheRunningWriteOfAnotherGatewayAlone) {
  auto first = Start("first");
  ASSERT_NE(first, nullptr);
  StalledUpload running(first->traffic_port(), "/files/shared.bin");
  ASSERT_TRUE(WaitForTempFiles(1));

  // A second gateway on the same root (its own data directory and ports) sweeps at its start.
  auto second = Start("second");
  ASSERT_NE(second, nullptr);
  ASSERT_TRUE(second->process().WaitForStderr(
      "removed 0 temp files of cut writes (0 bytes), 1 in use by running writes",
      std::chrono::seconds(20)))
      << second->process().Stderr();

  std::optional<Response> finished = running.Finish();
  ASSERT_TRUE(finished) << running.connection().error();
  EXPECT_EQ(finished->result_int(), 201) << finished->body();
  EXPECT_EQ(fs::file_size(root_ / "shared.bin"), kUploadBytes);
  EXPECT_TRUE(TempFiles(root_).empty());
}

TEST_F(TempFileCleanupTest, UploadsCutByTheClientOrTheBodyTimeoutLeaveNoTempFile) {
  GatewayConfig config = FilesConfig();
  config["timeouts"]["body_read"] = "1s";
  auto gateway = Start("gateway", config);
  ASSERT_NE(gateway, nullptr);
  {
    StalledUpload hung_up(gateway->traffic_port(), "/files/hung-up.bin");
    ASSERT_TRUE(WaitForTempFiles(1));
  }  // the client closes its connection mid-body
  EXPECT_TRUE(Eventually([&] { return TempFiles(root_).empty(); })) << TempFiles(root_).size();

  StalledUpload stalled(gateway->traffic_port(), "/files/stalled.bin");
  ASSERT_TRUE(WaitForTempFiles(1));
  // Cut by body_read once it has been silent for a second.
  EXPECT_TRUE(Eventually([&] { return TempFiles(root_).empty(); })) << TempFiles(root_).size();
  EXPECT_FALSE(fs::exists(root_ / "stalled.bin"));
}

TEST_F(TempFileCleanupTest, AnUploadCutByTheDrainLeavesNoTempFile) {
  GatewayConfig config = FilesConfig();
  config["timeouts"]["shutdown_drain"] = "200ms";
  auto gateway = Start("gateway", config);
  ASSERT_NE(gateway, nullptr);
  StalledUpload stalled(gateway->traffic_port(), "/files/d/stalled.bin");
  ASSERT_TRUE(WaitForTempFiles(1));
  gateway->process().Signal(SIGTERM);
  // 4: the drain ended with the upload still in flight (cut).
  EXPECT_EQ(gateway->process().Wait(std::chrono::seconds(20)), std::optional<int>(4));
  EXPECT_TRUE(TempFiles(root_).empty()) << TempFiles(root_).front();
  EXPECT_FALSE(fs::exists(root_ / "d" / "stalled.bin"));
}

}  // namespace
}  // namespace fencegate::integration
