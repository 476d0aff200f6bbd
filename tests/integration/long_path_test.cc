// README "Filesystem backends": a path the file store could not serve to every method (longer
// than PATH_MAX - 1 bytes below the root, or a name longer than NAME_MAX) is refused by every
// method with 414 path-too-long before anything is written; paths at the limits work for all.

#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/temp_dir.h"

namespace fencegate::integration {
namespace {

namespace fs = std::filesystem;

// 20 directories of 200 bytes: 4,020 bytes of "dir/" below the root.
std::string TwentyDirectories() {
  std::string path;
  for (int i = 0; i < 20; ++i) path += std::string(199, 'd') + static_cast<char>('a' + i) + "/";
  return path;
}

class LongPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GatewayConfig config;
    config.Backend("files") = FilesystemBackendAt(root_.string());
    config.Route("files", "/files/", "files", "files:{path}");
    std::string error;
    gateway_ = GatewayInstance::Start(dir_.WriteFile("fencegate.yaml", config.Yaml()),
                                      dir_.Join("data"), &error);
    ASSERT_NE(gateway_, nullptr) << error;
  }

  Response Send(http::verb method, const std::string& relative, const std::string& body = {}) {
    Request request = MakeRequest(method, "/files/" + relative, {}, body);
    if (method == http::verb::put || method == http::verb::delete_) {
      request.set("Fencing-Token", std::to_string(++token_));
    }
    std::string error;
    std::optional<Response> response = Fetch(gateway_->traffic_port(), std::move(request), &error);
    if (!response) {
      ADD_FAILURE() << error;
      return Response{};
    }
    return *response;
  }

  // Every method gets 414 path-too-long, and nothing is created under the root.
  void ExpectRefusedByEveryMethod(const std::string& relative) {
    // HEAD takes GET's way through the adapter (its answer has no body for the client to read).
    for (const http::verb method : {http::verb::put, http::verb::get, http::verb::delete_}) {
      const Response response = Send(method, relative, "data");
      EXPECT_EQ(response.result_int(), 414) << method << " " << relative.size();
      EXPECT_EQ(response[http::field::content_type], "application/problem+json");
      EXPECT_EQ(boost::json::parse(response.body()).at("type").as_string(),
                "https://fencegate.dev/problems/path-too-long")
          << response.body();
    }
    EXPECT_TRUE(fs::is_empty(root_)) << "something was written for " << relative.size();
  }

  // PUT creates, GET reads it back, DELETE removes it.
  void ExpectServedByEveryMethod(const std::string& relative) {
    EXPECT_EQ(Send(http::verb::put, relative, "content").result_int(), 201) << relative.size();
    const Response read = Send(http::verb::get, relative);
    EXPECT_EQ(read.result_int(), 200) << relative.size();
    EXPECT_EQ(read.body(), "content");
    EXPECT_EQ(Send(http::verb::delete_, relative).result_int(), 204) << relative.size();
    EXPECT_EQ(Send(http::verb::get, relative).result_int(), 404);
  }

  TempDir dir_;
  const fs::path root_ = dir_.Join("files");
  std::unique_ptr<GatewayInstance> gateway_;
  std::uint64_t token_ = 0;
};

TEST_F(LongPathTest, PathsLongerThanTheStoreServesAreRefusedByEveryMethod) {
  // 4,096 bytes below the root: one more than PATH_MAX - 1.
  ExpectRefusedByEveryMethod(TwentyDirectories() + std::string(76, 'f'));
  // Much longer, in short names (deep) and in long ones.
  std::string deep;
  for (int i = 0; i < 2100; ++i) deep += "d/";
  ExpectRefusedByEveryMethod(deep + "f");
  ExpectRefusedByEveryMethod(TwentyDirectories() + TwentyDirectories() + "f");
  // One name over NAME_MAX, alone and below a directory.
  ExpectRefusedByEveryMethod(std::string(256, 'n'));
  ExpectRefusedByEveryMethod("dir/" + std::string(256, 'n'));
}

TEST_F(LongPathTest, PathsAtTheLimitAreServedByEveryMethod) {
  // Exactly PATH_MAX - 1 bytes below the root.
  ExpectServedByEveryMethod(TwentyDirectories() + std::string(75, 'f'));
  // A long name that leaves room for a token sidecar's name, whichever way tokens are kept.
  ExpectServedByEveryMethod(std::string(239, 'n'));
}

}  // namespace
}  // namespace fencegate::integration
