// A fenced DeleteObjects (POST /bucket?delete) against the real radosgw, through the real binary:
// every key is fenced on its own (the route's fence key of /bucket/key), the whole request is
// refused when any key is stale, at the gateway's fence or at the backend, and otherwise every
// key gets a tombstone that keeps the token.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/s3/s3_gateway.h"

namespace fencegate::integration {
namespace {

std::string DeleteXml(const std::vector<std::string>& keys, bool quiet = false) {
  std::string xml = "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">";
  if (quiet) xml += "<Quiet>true</Quiet>";
  for (const std::string& key : keys) xml += "<Object><Key>" + key + "</Key></Object>";
  return xml + "</Delete>";
}

Response DeleteObjects(std::uint16_t port, const std::string& bucket, std::uint64_t token,
                       std::string body) {
  return Send(port, http::verb::post, "/" + bucket + "?delete", token, std::move(body));
}

std::string Get(std::uint16_t port, const std::string& target) {
  const Response response = Send(port, http::verb::get, target, std::nullopt);
  return response.result_int() == 200 ? response.body() : std::to_string(response.result_int());
}

TEST(S3MultiDeleteTest, EveryKeyGetsATombstoneThatKeepsTheToken) {
  S3Gateway first;
  S3Gateway second;
  ASSERT_NE(first.instance, nullptr);
  ASSERT_NE(second.instance, nullptr);
  CreateBucket(first.port(), "multi");
  ASSERT_EQ(Put(first.port(), "/multi/a", 10, "a").result_int(), 200);
  ASSERT_EQ(Put(first.port(), "/multi/dir/b%20c", 10, "b").result_int(), 200);

  const Response deleted =
      DeleteObjects(first.port(), "multi", 11, DeleteXml({"a", "dir/b c", "never-written", "a"}));
  ASSERT_EQ(deleted.result_int(), 200) << deleted.body();
  EXPECT_EQ(deleted[http::field::content_type], "application/xml");
  for (const char* key : {"a", "dir/b c", "never-written"}) {
    EXPECT_NE(deleted.body().find("<Deleted><Key>" + std::string(key) + "</Key></Deleted>"),
              std::string::npos)
        << deleted.body();
  }
  EXPECT_EQ(deleted.body().find("<Error>"), std::string::npos) << deleted.body();
  EXPECT_EQ(Get(first.port(), "/multi/a"), "404");
  EXPECT_EQ(Get(first.port(), "/multi/dir/b%20c"), "404");
  EXPECT_EQ(Get(first.port(), "/multi/never-written"), "404");

  // The tombstones keep token 11: a zombie with 10 behind a gateway whose own fence never saw
  // 11 is refused by the backend, for a key that existed and for one that did not.
  for (const char* target : {"/multi/a", "/multi/never-written"}) {
    const Response zombie = Put(second.port(), target, 10, "zombie");
    EXPECT_EQ(zombie.result_int(), 409) << target << ": " << zombie.body();
    EXPECT_EQ(Reason(zombie), "backend_fence") << target;
  }
  // This gateway's fence saw 11 on every key it admitted.
  const Response stale = Put(first.port(), "/multi/dir/b%20c", 10, "zombie");
  EXPECT_EQ(stale.result_int(), 409);
  EXPECT_EQ(Reason(stale), "stale_token");
  EXPECT_EQ(Get(first.port(), "/multi/a"), "404");
}

TEST(S3MultiDeleteTest, AKeyStaleAtTheGatewayRefusesTheWholeRequest) {
  S3Gateway gateway;
  ASSERT_NE(gateway.instance, nullptr);
  CreateBucket(gateway.port(), "multi-gw");
  ASSERT_EQ(Put(gateway.port(), "/multi-gw/old", 5, "old").result_int(), 200);
  ASSERT_EQ(Put(gateway.port(), "/multi-gw/newer", 20, "newer").result_int(), 200);

  const Response refused =
      DeleteObjects(gateway.port(), "multi-gw", 15, DeleteXml({"old", "newer"}));
  EXPECT_EQ(refused.result_int(), 409) << refused.body();
  EXPECT_EQ(refused[http::field::content_type], "application/problem+json");
  EXPECT_EQ(Reason(refused), "stale_token");
  EXPECT_NE(refused.body().find("\"fence_key\":\"s3:/multi-gw/newer\""), std::string::npos)
      << refused.body();
  EXPECT_NE(refused.body().find("\"highest_token\":20"), std::string::npos) << refused.body();
  // Nothing was deleted, and the key that was not stale keeps its fence usable at 15: the
  // admission made for it was released.
  EXPECT_EQ(Get(gateway.port(), "/multi-gw/old"), "old");
  EXPECT_EQ(Get(gateway.port(), "/multi-gw/newer"), "newer");
  EXPECT_EQ(Put(gateway.port(), "/multi-gw/old", 15, "old at 15").result_int(), 200);

  // The rejection is in the audit trail and the route's metrics like any other stale write.
  const Response metrics =
      Send(gateway.instance->admin_port(), http::verb::get, "/metrics", std::nullopt);
  EXPECT_NE(metrics.body().find("reason=\"stale_token\""), std::string::npos);
}

TEST(S3MultiDeleteTest, AKeyStaleAtTheBackendRefusesTheWholeRequest) {
  S3Gateway first;
  S3Gateway second;
  ASSERT_NE(first.instance, nullptr);
  ASSERT_NE(second.instance, nullptr);
  CreateBucket(first.port(), "multi-be");
  ASSERT_EQ(Put(first.port(), "/multi-be/fresh", 30, "fresh").result_int(), 200);
  ASSERT_EQ(Put(first.port(), "/multi-be/other", 3, "other").result_int(), 200);

  // The second gateway's fence never saw 30: only the stored token can refuse the zombie.
  const Response refused =
      DeleteObjects(second.port(), "multi-be", 25, DeleteXml({"other", "fresh"}));
  EXPECT_EQ(refused.result_int(), 409) << refused.body();
  EXPECT_EQ(Reason(refused), "backend_fence");
  EXPECT_NE(refused.body().find("'fresh' (30)"), std::string::npos) << refused.body();
  EXPECT_EQ(refused.body().find("'other'"), std::string::npos) << refused.body();
  EXPECT_EQ(Get(first.port(), "/multi-be/fresh"), "fresh");
  EXPECT_EQ(Get(first.port(), "/multi-be/other"), "other");
}

TEST(S3MultiDeleteTest, QuietListsOnlyErrorsAndBadBodiesAreRefused) {
  S3Gateway gateway;
  ASSERT_NE(gateway.instance, nullptr);
  CreateBucket(gateway.port(), "multi-quiet");
  ASSERT_EQ(Put(gateway.port(), "/multi-quiet/q", 40, "q").result_int(), 200);
  const Response quiet =
      DeleteObjects(gateway.port(), "multi-quiet", 41, DeleteXml({"q"}, /*quiet=*/true));
  ASSERT_EQ(quiet.result_int(), 200) << quiet.body();
  EXPECT_NE(quiet.body().find("<DeleteResult"), std::string::npos) << quiet.body();
  EXPECT_EQ(quiet.body().find("<Deleted>"), std::string::npos) << quiet.body();
  EXPECT_EQ(Get(gateway.port(), "/multi-quiet/q"), "404");

  for (const std::string& body :
       {std::string("not xml"), std::string("<Delete></Delete>"),
        std::string("<Delete><Object><Key>q</Key><VersionId>v1</VersionId></Object></Delete>"),
        DeleteXml({"../escape"})}) {
    const Response bad = DeleteObjects(gateway.port(), "multi-quiet", 42, body);
    EXPECT_EQ(bad.result_int(), 400) << body << ": " << bad.body();
    EXPECT_EQ(bad[http::field::content_type], "application/problem+json") << body;
  }
  // Without a token the request is refused like any fenced write.
  const Response untokened =
      Send(gateway.port(), http::verb::post, "/multi-quiet?delete", std::nullopt, DeleteXml({"q"}));
  EXPECT_EQ(untokened.result_int(), 428) << untokened.body();
}

}  // namespace
}  // namespace fencegate::integration
