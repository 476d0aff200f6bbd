// The token of a resource outlives the resource: deleting or moving it away leaves its token on
// the parent collection (a member property, under a depth-0 LOCK of the parent), so a zombie
// behind another gateway (its own fence store, which never saw the newer token) cannot bring the
// resource back with a lower token. Real fencegate binaries in front of a real Apache mod_dav_fs.
#include <gtest/gtest.h>

#include "tests/webdav/webdav_support.h"

namespace fencegate::webdav_test {
namespace {

namespace http = boost::beast::http;
using integration::MakeRequest;

class WebdavMembershipTest : public ApacheDavTest {
 protected:
  void SetUp() override { StartApacheAndGateways(2, LockRetries(20, "5ms")); }

  std::uint16_t a() const { return gateways_[0]->port(); }
  std::uint16_t b() const { return gateways_[1]->port(); }
  unsigned Status(const std::string& path) {
    return Send(dav(), MakeRequest(http::verb::get, path)).result_int();
  }
  // True when nothing holds a lock on `path` (Apache takes an unconditional PROPPATCH).
  bool Unlocked(const std::string& path) { return UnconditionalWriteStatus(path) == 207; }
  // True when a LOCK straight at Apache is granted (it is released again): no lock, not even
  // the lock-null resource of a refused create, was left on the missing `path`.
  bool Lockable(const std::string& path) {
    auto lock = Send(dav(), MakeRequest(http::verb::lock, path, {{"Timeout", "Second-60"}},
                                        "<?xml version=\"1.0\"?><D:lockinfo xmlns:D=\"DAV:\">"
                                        "<D:lockscope><D:exclusive/></D:lockscope><D:locktype>"
                                        "<D:write/></D:locktype></D:lockinfo>"));
    if (lock.result_int() != 200) return false;
    return Send(dav(), MakeRequest(http::verb::unlock, path,
                                   {{"Lock-Token", std::string(lock["Lock-Token"])}}))
               .result_int() == 204;
  }
  void ExpectBackendFence(const integration::Response& response) {
    EXPECT_EQ(response.result_int(), 409) << response.body();
    EXPECT_EQ(ProblemType(response.body()), "stale-token-at-backend") << response.body();
    EXPECT_EQ(ProblemReason(response.body()), "backend_fence") << response.body();
  }
};

TEST_F(WebdavMembershipTest, AResourceDeletedWithAHigherTokenStaysDeletedForALowerOne) {
  ASSERT_EQ(Send(a(), Fenced(http::verb::put, "/dav/doc.txt", 4, "four")).result_int(), 201);
  // Gateway A deletes with token 6; gateway B's store has never seen a token for this key.
  auto removed = Send(a(), Fenced(http::verb::delete_, "/dav/doc.txt", 6));
  ASSERT_EQ(removed.result_int(), 204) << removed.body();
  ASSERT_EQ(Status("/dav/doc.txt"), 404u);
  EXPECT_EQ(StoredToken(dav(), "/dav/doc.txt"), std::nullopt) << "its own property is gone";

  // The zombie (token 5) re-creates it through B: the parent remembers 6.
  ExpectBackendFence(Send(b(), Fenced(http::verb::put, "/dav/doc.txt", 5, "zombie")));
  EXPECT_EQ(Status("/dav/doc.txt"), 404u) << "the resource stays absent";
  ExpectBackendFence(Send(b(), Fenced(http::verb::mkcol, "/dav/doc.txt", 5)));
  EXPECT_EQ(Status("/dav/doc.txt"), 404u);
  EXPECT_TRUE(Unlocked("/dav/")) << "the parent's depth-0 lock is released after a refusal";
  EXPECT_TRUE(Lockable("/dav/doc.txt"));

  // The holder of token 6 (or a later one) may bring it back, through either gateway.
  auto recreated = Send(b(), Fenced(http::verb::put, "/dav/doc.txt", 6, "six"));
  EXPECT_EQ(recreated.result_int(), 201) << recreated.body();
  EXPECT_EQ(StoredToken(dav(), "/dav/doc.txt"), 6u);
  EXPECT_EQ(Send(dav(), MakeRequest(http::verb::get, "/dav/doc.txt")).body(), "six");
  EXPECT_TRUE(Unlocked("/dav/"));
}

TEST_F(WebdavMembershipTest, TheSourceOfAMoveKeepsItsToken) {
  const std::string dav_url = "http://127.0.0.1:" + std::to_string(dav());
  ASSERT_EQ(Send(a(), Fenced(http::verb::put, "/dav/src.txt", 2, "two")).result_int(), 201);
  auto moved = Send(a(), Fenced(http::verb::move, "/dav/src.txt", 9, {}, dav_url + "/dav/dst.txt"));
  ASSERT_EQ(moved.result_int(), 201) << moved.body();
  EXPECT_EQ(StoredToken(dav(), "/dav/dst.txt"), 9u);

  ExpectBackendFence(Send(b(), Fenced(http::verb::put, "/dav/src.txt", 8, "zombie")));
  EXPECT_EQ(Status("/dav/src.txt"), 404u);
  // Nor can a COPY or MOVE bring a resource back to where one with a higher token was removed.
  ASSERT_EQ(Send(b(), Fenced(http::verb::put, "/dav/other.txt", 1, "one")).result_int(), 201);
  ExpectBackendFence(
      Send(b(), Fenced(http::verb::copy, "/dav/other.txt", 7, {}, dav_url + "/dav/src.txt")));
  ExpectBackendFence(
      Send(b(), Fenced(http::verb::move, "/dav/other.txt", 7, {}, dav_url + "/dav/src.txt")));
  EXPECT_EQ(Status("/dav/src.txt"), 404u);
  EXPECT_EQ(Status("/dav/other.txt"), 200u) << "a refused MOVE leaves its source";
  for (const char* path : {"/dav/", "/dav/other.txt", "/dav/dst.txt"}) {
    EXPECT_TRUE(Unlocked(path)) << path;
  }
}

TEST_F(WebdavMembershipTest, ACollectionDeletedWithAHigherTokenIsNotRecreatedWithALowerOne) {
  ASSERT_EQ(Send(a(), Fenced(http::verb::mkcol, "/dav/box/", 3)).result_int(), 201);
  ASSERT_EQ(Send(a(), Fenced(http::verb::put, "/dav/box/in.txt", 3, "in")).result_int(), 201);
  ASSERT_EQ(Send(a(), Fenced(http::verb::delete_, "/dav/box/", 5)).result_int(), 204);
  ExpectBackendFence(Send(b(), Fenced(http::verb::mkcol, "/dav/box/", 4)));
  EXPECT_EQ(Status("/dav/box/in.txt"), 404u);
  // A member deleted on its own keeps its token in the collection, next to others.
  ASSERT_EQ(Send(a(), Fenced(http::verb::mkcol, "/dav/box/", 5)).result_int(), 201);
  ASSERT_EQ(Send(a(), Fenced(http::verb::put, "/dav/box/a", 5, "a")).result_int(), 201);
  ASSERT_EQ(Send(a(), Fenced(http::verb::put, "/dav/box/b", 5, "b")).result_int(), 201);
  ASSERT_EQ(Send(a(), Fenced(http::verb::delete_, "/dav/box/a", 8)).result_int(), 204);
  ExpectBackendFence(Send(b(), Fenced(http::verb::put, "/dav/box/a", 7, "zombie")));
  EXPECT_EQ(Send(b(), Fenced(http::verb::put, "/dav/box/b", 7, "b7")).result_int(), 204);
  EXPECT_EQ(Status("/dav/box/a"), 404u);
}

// A resource written around the gateways carries no token of its own: its parent's member token
// still stops a lower one.
TEST_F(WebdavMembershipTest, AResourceWithoutATokenIsCheckedAgainstItsParent) {
  ASSERT_EQ(Send(a(), Fenced(http::verb::put, "/dav/raw.txt", 10, "ten")).result_int(), 201);
  ASSERT_EQ(Send(a(), Fenced(http::verb::delete_, "/dav/raw.txt", 11)).result_int(), 204);
  ASSERT_EQ(Send(dav(), MakeRequest(http::verb::put, "/dav/raw.txt", {}, "direct")).result_int(),
            201);
  ExpectBackendFence(Send(b(), Fenced(http::verb::put, "/dav/raw.txt", 9, "zombie")));
  EXPECT_EQ(Send(dav(), MakeRequest(http::verb::get, "/dav/raw.txt")).body(), "direct");
  EXPECT_EQ(Send(b(), Fenced(http::verb::put, "/dav/raw.txt", 12, "twelve")).result_int(), 204);
  EXPECT_EQ(StoredToken(dav(), "/dav/raw.txt"), 12u);
}

}  // namespace
}  // namespace fencegate::webdav_test
