// The webdav adapter through the real fencegate binary, in front of a real Apache 2.4 with
// mod_dav_fs: the token kept with each resource, refusals by the backend when a second gateway
// (with its own fence store) presents a lower token, every fenced method, and locks released
// on every path.
#include <gtest/gtest.h>

#include "tests/support/admin_client.h"
#include "tests/webdav/webdav_support.h"

namespace fencegate::webdav_test {
namespace {

namespace http = boost::beast::http;
using integration::MakeRequest;

constexpr const char* kLockBody =
    "<?xml version=\"1.0\"?><D:lockinfo xmlns:D=\"DAV:\"><D:lockscope><D:exclusive/>"
    "</D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>";

class WebdavTest : public ApacheDavTest {
 protected:
  void SetUp() override {
    // Few, quick LOCK retries: the tests that meet a foreign lock wait for the 503.
    StartApacheAndGateways(1, LockRetries(20, "5ms"));
  }

  std::uint16_t gw() const { return gateways_[0]->port(); }

  // True when nothing holds a lock on `path`: Apache takes an unconditional write.
  bool Unlocked(const std::string& path) { return UnconditionalWriteStatus(path) != 423; }
};

TEST_F(WebdavTest, FencedPutStoresTheTokenWithTheResourceAndReadsPassThrough) {
  auto created = Send(gw(), Fenced(http::verb::put, "/dav/a.txt", 5, "five"));
  ASSERT_EQ(created.result_int(), 201) << created.body();
  EXPECT_EQ(StoredToken(dav(), "/dav/a.txt"), 5u);

  auto replaced = Send(gw(), Fenced(http::verb::put, "/dav/a.txt", 6, "six"));
  ASSERT_EQ(replaced.result_int(), 204) << replaced.body();
  EXPECT_EQ(StoredToken(dav(), "/dav/a.txt"), 6u);

  auto read = Send(gw(), MakeRequest(http::verb::get, "/dav/a.txt"));
  EXPECT_EQ(read.result_int(), 200);
  EXPECT_EQ(read.body(), "six");
  EXPECT_TRUE(Unlocked("/dav/a.txt"));
}

TEST_F(WebdavTest, SecondGatewayWithALowerTokenIsRefusedByTheBackend) {
  std::string error;
  auto other = StartGateway(dav(), &error);
  ASSERT_NE(other, nullptr) << error;

  ASSERT_EQ(Send(gw(), Fenced(http::verb::put, "/dav/b.txt", 10, "ten")).result_int(), 201);
  // The other gateway's fence store has never seen token 10 for this key: its own check
  // admits 7, and only the token stored at the backend stops the write.
  auto stale = Send(other->port(), Fenced(http::verb::put, "/dav/b.txt", 7, "seven"));
  EXPECT_EQ(stale.result_int(), 409) << stale.body();
  EXPECT_EQ(ProblemType(stale.body()), "stale-token-at-backend");
  EXPECT_EQ(ProblemReason(stale.body()), "backend_fence");
  EXPECT_EQ(stale[http::field::content_type], "application/problem+json");
  EXPECT_EQ(Send(dav(), MakeRequest(http::verb::get, "/dav/b.txt")).body(), "ten");
  EXPECT_EQ(StoredToken(dav(), "/dav/b.txt"), 10u);
  EXPECT_TRUE(Unlocked("/dav/b.txt")) << "the refusal must UNLOCK";

  const std::string metrics = integration::FetchMetricsText(other->instance->admin_port());
  EXPECT_EQ(integration::MetricValue(metrics, "fencegate_writes_rejected_total",
                                     R"(route="dav",reason="backend_fence")"),
            1.0)
      << metrics;

  // DELETE is fenced the same way; a higher token from the other gateway goes through.
  auto stale_delete =
      Send(other->port(), MakeRequest(http::verb::delete_, "/dav/b.txt", {{"Fencing-Token", "8"}}));
  EXPECT_EQ(stale_delete.result_int(), 409) << stale_delete.body();
  EXPECT_EQ(Send(other->port(), Fenced(http::verb::put, "/dav/b.txt", 11, "eleven")).result_int(),
            204);
  EXPECT_EQ(StoredToken(dav(), "/dav/b.txt"), 11u);
}

TEST_F(WebdavTest, MkcolCopyMoveAndDeleteAreFencedAndCarryTheToken) {
  auto mkcol = Send(gw(), MakeRequest(http::verb::mkcol, "/dav/dir/", {{"Fencing-Token", "3"}}));
  ASSERT_EQ(mkcol.result_int(), 201) << mkcol.body();
  EXPECT_EQ(StoredToken(dav(), "/dav/dir/"), 3u);

  ASSERT_EQ(Send(gw(), Fenced(http::verb::put, "/dav/dir/src.txt", 4, "source")).result_int(), 201);
  // The client names the gateway in Destination; the adapter points it at the server.
  const std::string gateway_url = "http://127.0.0.1:" + std::to_string(gw());
  auto copy = Send(gw(), MakeRequest(http::verb::copy, "/dav/dir/src.txt",
                                     {{"Fencing-Token", "5"},
                                      {"Destination", gateway_url + "/dav/dir/copy.txt"}}));
  ASSERT_EQ(copy.result_int(), 201) << copy.body();
  EXPECT_EQ(StoredToken(dav(), "/dav/dir/copy.txt"), 5u);
  EXPECT_EQ(Send(dav(), MakeRequest(http::verb::get, "/dav/dir/copy.txt")).body(), "source");

  auto move = Send(gw(), MakeRequest(http::verb::move, "/dav/dir/copy.txt",
                                     {{"Fencing-Token", "6"},
                                      {"Destination", gateway_url + "/dav/dir/moved.txt"}}));
  ASSERT_EQ(move.result_int(), 201) << move.body();
  EXPECT_EQ(StoredToken(dav(), "/dav/dir/moved.txt"), 6u);
  EXPECT_EQ(Send(dav(), MakeRequest(http::verb::get, "/dav/dir/copy.txt")).result_int(), 404);

  auto removed =
      Send(gw(), MakeRequest(http::verb::delete_, "/dav/dir/moved.txt", {{"Fencing-Token", "7"}}));
  EXPECT_EQ(removed.result_int(), 204) << removed.body();
  EXPECT_EQ(Send(dav(), MakeRequest(http::verb::get, "/dav/dir/moved.txt")).result_int(), 404);
  for (const char* path : {"/dav/dir/", "/dav/dir/src.txt", "/dav/dir/moved.txt"}) {
    EXPECT_TRUE(Unlocked(path)) << path;
  }
}

TEST_F(WebdavTest, MoveOntoADestinationWithAHigherTokenIsRefused) {
  std::string error;
  auto other = StartGateway(dav(), &error);
  ASSERT_NE(other, nullptr) << error;
  // Different fence keys at the gateway (first path segment), one resource at the backend.
  ASSERT_EQ(Send(gw(), Fenced(http::verb::put, "/dav/high.txt", 20, "high")).result_int(), 201);
  ASSERT_EQ(Send(other->port(), Fenced(http::verb::put, "/dav/low.txt", 2, "low")).result_int(),
            201);
  auto move =
      Send(other->port(), MakeRequest(http::verb::move, "/dav/low.txt",
                                      {{"Fencing-Token", "3"}, {"Destination", "/dav/high.txt"}}));
  EXPECT_EQ(move.result_int(), 409) << move.body();
  EXPECT_EQ(ProblemReason(move.body()), "backend_fence");
  EXPECT_EQ(Send(dav(), MakeRequest(http::verb::get, "/dav/high.txt")).body(), "high");
  EXPECT_TRUE(Unlocked("/dav/low.txt"));
  EXPECT_TRUE(Unlocked("/dav/high.txt"));
}

TEST_F(WebdavTest, ReservedMethodsAndAClientIfHeaderAreRefused) {
  for (http::verb method : {http::verb::lock, http::verb::unlock, http::verb::proppatch}) {
    auto refused = Send(gw(), MakeRequest(method, "/dav/x.txt", {}, kLockBody));
    EXPECT_EQ(refused.result_int(), 405) << refused.body();
    EXPECT_EQ(ProblemType(refused.body()), "webdav-method-reserved");
  }
  auto with_if = Send(gw(), MakeRequest(http::verb::put, "/dav/x.txt",
                                        {{"Fencing-Token", "1"}, {"If", "(<urn:x>)"}}, "x"));
  EXPECT_EQ(with_if.result_int(), 400) << with_if.body();
  EXPECT_EQ(ProblemType(with_if.body()), "webdav-if-header-not-supported");
  EXPECT_EQ(Send(dav(), MakeRequest(http::verb::get, "/dav/x.txt")).result_int(), 404);
}

TEST_F(WebdavTest, AForeignLockHoldsTheWriteBackThenItFailsWith503) {
  ASSERT_EQ(Send(gw(), Fenced(http::verb::put, "/dav/held.txt", 1, "one")).result_int(), 201);
  auto lock = Send(
      dav(), MakeRequest(http::verb::lock, "/dav/held.txt", {{"Timeout", "Second-60"}}, kLockBody));
  ASSERT_EQ(lock.result_int(), 200) << lock.body();
  const std::string lock_token(lock["Lock-Token"]);

  auto blocked = Send(gw(), Fenced(http::verb::put, "/dav/held.txt", 2, "two"));
  EXPECT_EQ(blocked.result_int(), 503) << blocked.body();
  EXPECT_EQ(ProblemType(blocked.body()), "webdav-resource-locked");
  EXPECT_EQ(Send(dav(), MakeRequest(http::verb::get, "/dav/held.txt")).body(), "one");

  ASSERT_EQ(
      Send(dav(), MakeRequest(http::verb::unlock, "/dav/held.txt", {{"Lock-Token", lock_token}}))
          .result_int(),
      204);
  EXPECT_EQ(Send(gw(), Fenced(http::verb::put, "/dav/held.txt", 2, "two")).result_int(), 204);
  EXPECT_EQ(StoredToken(dav(), "/dav/held.txt"), 2u);
}

TEST_F(WebdavTest, UnfencedRequestsPassThrough) {
  ASSERT_EQ(Send(dav(), MakeRequest(http::verb::put, "/dav/plain.txt", {}, "plain")).result_int(),
            201);
  auto listing = Send(gw(), MakeRequest(http::verb::propfind, "/dav/", {{"Depth", "1"}}));
  EXPECT_EQ(listing.result_int(), 207);
  EXPECT_NE(listing.body().find("/dav/plain.txt"), std::string::npos);
  EXPECT_EQ(Send(gw(), MakeRequest(http::verb::get, "/dav/plain.txt")).body(), "plain");
  // A fenced method without a token is refused by the gateway before the adapter runs.
  EXPECT_EQ(Send(gw(), MakeRequest(http::verb::put, "/dav/plain.txt", {}, "x")).result_int(), 428);
}

}  // namespace
}  // namespace fencegate::webdav_test
