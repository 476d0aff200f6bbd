// A lock of the gateway's own fenced writes that the server kept although no write holds it any
// more (an orphan: its UNLOCK was lost, or its LOCK was granted after the gateway stopped waiting
// for the answer) is released by the next write it stands in the way of, rather than refusing
// writes to that resource until the lock's Timeout. A lock anyone else holds is never touched.
// Real fencegate in front of a real Apache mod_dav_fs, through a relay that can lose answers.
#include <gtest/gtest.h>

#include "tests/support/admin_client.h"
#include "tests/support/tcp_relay.h"
#include "tests/webdav/webdav_support.h"

namespace fencegate::webdav_test {
namespace {

namespace http = boost::beast::http;
using integration::MakeRequest;

class WebdavOrphanLockTest : public ApacheDavTest {
 protected:
  void SetUp() override {
    if (!ApacheAvailable()) GTEST_SKIP() << "apache2 is not installed (scripts/install-deps.sh)";
    std::string error;
    apache_ = ApacheDav::Start(&error);
    ASSERT_NE(apache_, nullptr) << error;
    relay_ = std::make_unique<integration::TcpRelay>(apache_->port());
    YAML::Node keys = LockRetries(30, "5ms");
    // Far longer than the test: a lock that goes away was released, it did not lapse.
    keys["lock_timeout"] = "300s";
    keys["response_timeout"] = "1s";
    gateway_ = StartGateway(
        DavGatewayConfig("http://127.0.0.1:" + std::to_string(relay_->port()), keys), &error);
    ASSERT_NE(gateway_, nullptr) << error;
  }

  // The LOCK Apache answers a client that is not the gateway, released again when granted.
  unsigned LockStatusAtApache(const std::string& path) {
    auto lock = Send(
        dav(), MakeRequest(http::verb::lock, path, {{"Timeout", "Second-60"}}, LockBody("test")));
    if (lock.result_int() == 200) {
      Send(dav(), MakeRequest(http::verb::unlock, path,
                              {{"Lock-Token", std::string(lock["Lock-Token"])}}));
    }
    return lock.result_int();
  }

  static std::string LockBody(const std::string& owner) {
    return "<?xml version=\"1.0\"?><D:lockinfo xmlns:D=\"DAV:\"><D:lockscope><D:exclusive/>"
           "</D:lockscope><D:locktype><D:write/></D:locktype><D:owner>" +
           owner + "</D:owner></D:lockinfo>";
  }

  double OrphansReleased() {
    return integration::MetricValue(integration::FetchMetricsText(gateway_->instance->admin_port()),
                                    "fencegate_backend_orphaned_locks_released_total",
                                    R"(backend="dav")")
        .value_or(-1);
  }

  std::unique_ptr<integration::TcpRelay> relay_;
  std::unique_ptr<Gateway> gateway_;
};

TEST_F(WebdavOrphanLockTest, ALockWhoseAnswerWasLostIsReleasedByTheNextWrite) {
  ASSERT_EQ(Send(gateway_->port(), Fenced(http::verb::put, "/dav/doc.txt", 1, "one")).result_int(),
            201u);
  // Apache grants the next write's LOCK, but the gateway never hears so: it gives up after
  // response_timeout and the lock stays, with the gateway's owner mark and no write holding it.
  relay_->LoseAnswers();
  const auto lost = Send(gateway_->port(), Fenced(http::verb::put, "/dav/doc.txt", 2, "two"));
  EXPECT_EQ(lost.result_int(), 504u) << lost.body();
  EXPECT_GT(relay_->answers_lost(), 0);
  relay_->Release();
  ASSERT_EQ(LockStatusAtApache("/dav/doc.txt"), 423u) << "the orphaned lock is in place";
  EXPECT_EQ(OrphansReleased(), 0);

  const auto written = Send(gateway_->port(), Fenced(http::verb::put, "/dav/doc.txt", 3, "three"));
  EXPECT_EQ(written.result_int(), 204u) << written.body();
  EXPECT_EQ(Send(dav(), MakeRequest(http::verb::get, "/dav/doc.txt")).body(), "three");
  EXPECT_EQ(StoredToken(dav(), "/dav/doc.txt"), 3u);
  EXPECT_EQ(OrphansReleased(), 1);
  EXPECT_EQ(LockStatusAtApache("/dav/doc.txt"), 200u) << "nothing left locked";
}

// A LOCK of a missing resource leaves a lock-null resource behind when its answer is lost; the
// orphan's UNLOCK removes it, and the write creates the resource.
TEST_F(WebdavOrphanLockTest, AnOrphanOnAMissingResourceIsReleased) {
  ASSERT_EQ(Send(gateway_->port(), Fenced(http::verb::mkcol, "/dav/box/", 1)).result_int(), 201u);
  relay_->LoseAnswers();
  const auto lost = Send(gateway_->port(), Fenced(http::verb::put, "/dav/box/a.txt", 2, "a"));
  EXPECT_EQ(lost.result_int(), 504u) << lost.body();
  relay_->Release();
  ASSERT_EQ(LockStatusAtApache("/dav/box/a.txt"), 423u);
  EXPECT_EQ(Send(dav(), MakeRequest(http::verb::get, "/dav/box/a.txt")).result_int(), 404u);

  const auto written = Send(gateway_->port(), Fenced(http::verb::put, "/dav/box/a.txt", 3, "a3"));
  EXPECT_EQ(written.result_int(), 201u) << written.body();
  EXPECT_EQ(Send(dav(), MakeRequest(http::verb::get, "/dav/box/a.txt")).body(), "a3");
  EXPECT_EQ(OrphansReleased(), 1);
  EXPECT_EQ(LockStatusAtApache("/dav/box/a.txt"), 200u);
  EXPECT_EQ(LockStatusAtApache("/dav/box/"), 200u);
}

// Another client's lock (another gateway's, an editor's) is waited for, never released: the
// write gives up with 503 and the lock is still its holder's.
TEST_F(WebdavOrphanLockTest, SomeoneElsesLockIsNeverReleased) {
  ASSERT_EQ(Send(gateway_->port(), Fenced(http::verb::put, "/dav/held.txt", 1, "one")).result_int(),
            201u);
  auto lock = Send(dav(), MakeRequest(http::verb::lock, "/dav/held.txt",
                                      {{"Timeout", "Second-300"}}, LockBody("fencegate-write 0")));
  ASSERT_EQ(lock.result_int(), 200u) << lock.body();

  const auto refused = Send(gateway_->port(), Fenced(http::verb::put, "/dav/held.txt", 2, "two"));
  EXPECT_EQ(refused.result_int(), 503u) << refused.body();
  EXPECT_EQ(ProblemType(refused.body()), "webdav-resource-locked") << refused.body();
  EXPECT_EQ(OrphansReleased(), 0);
  EXPECT_EQ(Send(dav(), MakeRequest(http::verb::unlock, "/dav/held.txt",
                                    {{"Lock-Token", std::string(lock["Lock-Token"])}}))
                .result_int(),
            204u)
      << "the holder's lock was still there";
  EXPECT_EQ(Send(dav(), MakeRequest(http::verb::get, "/dav/held.txt")).body(), "one");
}

}  // namespace
}  // namespace fencegate::webdav_test
