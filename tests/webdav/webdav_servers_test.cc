// Three real Apache mod_dav servers behind one webdav backend with `policy: fence_key` (issue
// 27): every fenced write of a resource, its whole lock sequence included, goes to the server
// its fence key hashes to; when that server dies, its resources move to the others on the
// first write (the first LOCK could not reach it, so nothing was sent and the write starts over
// elsewhere), and no other resource moves.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/webdav/webdav_support.h"

namespace fencegate::webdav_test {
namespace {

namespace http = boost::beast::http;

constexpr int kServers = 3;
constexpr int kResources = 24;

std::string ResourcePath(int resource) { return "/dav/r" + std::to_string(resource) + ".txt"; }

class WebdavServersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ApacheAvailable()) GTEST_SKIP() << "apache2 with mod_dav_fs is not installed";
    YAML::Node servers;
    for (int i = 0; i < kServers; ++i) {
      std::string error;
      apaches_.push_back(ApacheDav::Start(&error));
      ASSERT_NE(apaches_.back(), nullptr) << error;
      servers.push_back("http://127.0.0.1:" + std::to_string(apaches_.back()->port()));
    }
    integration::GatewayConfig config = DavGatewayConfig("unused");
    YAML::Node dav = config.Backend("dav");
    dav.remove("url");
    dav["servers"] = servers;
    dav["policy"] = "fence_key";
    std::string error;
    gateway_ = StartGateway(config, &error);
    ASSERT_NE(gateway_, nullptr) << error;
  }

  // The servers, among the living ones, that hold `path` with token `token`.
  std::vector<int> Holders(const std::string& path, std::uint64_t token) {
    std::vector<int> holders;
    for (int i = 0; i < kServers; ++i) {
      if (apaches_[i] && StoredToken(apaches_[i]->port(), path) == token) holders.push_back(i);
    }
    return holders;
  }

  std::vector<std::unique_ptr<ApacheDav>> apaches_;
  std::unique_ptr<Gateway> gateway_;  // after apaches_: stopped before them
};

TEST_F(WebdavServersTest, EachResourceStaysOnItsServerAndOnlyTheDeadServersResourcesMove) {
  std::vector<int> owner(kResources, -1);
  std::vector<int> owned(kServers, 0);
  for (int r = 0; r < kResources; ++r) {
    for (std::uint64_t token : {1, 2}) {
      const auto response = Send(gateway_->port(), Fenced(http::verb::put, ResourcePath(r), token,
                                                          "v" + std::to_string(token)));
      ASSERT_TRUE(response.result_int() == 201 || response.result_int() == 204)
          << ResourcePath(r) << " token " << token << ": " << response.result_int() << " "
          << response.body();
    }
    // Both writes, lock sequences included, went to one server: it alone holds the resource.
    const std::vector<int> holders = Holders(ResourcePath(r), 2);
    ASSERT_EQ(holders.size(), 1u) << ResourcePath(r);
    EXPECT_EQ(Holders(ResourcePath(r), 1).size(), 0u) << ResourcePath(r);
    owner[r] = holders.front();
    ++owned[owner[r]];
  }
  int victim = 0;
  for (int i = 1; i < kServers; ++i) {
    if (owned[i] > owned[victim]) victim = i;
  }
  apaches_[victim].reset();  // stopped: its port refuses connections from now on

  for (int r = 0; r < kResources; ++r) {
    const auto response = Send(gateway_->port(), Fenced(http::verb::put, ResourcePath(r), 3, "v3"));
    ASSERT_TRUE(response.result_int() == 201 || response.result_int() == 204)
        << ResourcePath(r) << " after server " << victim << " died: " << response.result_int()
        << " " << response.body();
    const std::vector<int> holders = Holders(ResourcePath(r), 3);
    ASSERT_EQ(holders.size(), 1u) << ResourcePath(r);
    if (owner[r] != victim) {
      EXPECT_EQ(holders.front(), owner[r]) << ResourcePath(r) << " moved, its server is alive";
    }
  }
}

}  // namespace
}  // namespace fencegate::webdav_test
