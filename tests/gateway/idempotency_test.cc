#include "gateway/session/idempotency.h"

#include <string>

#include <gtest/gtest.h>

namespace fencegate::gateway {
namespace {

TEST(IdempotencyKeyTest, AcceptsSfStringsAndBareKeys) {
  std::string key;
  ASSERT_TRUE(ParseIdempotencyKey(R"("8e03978e-40d5-43e8-bc93-6894a57f9324")", &key));
  EXPECT_EQ(key, "8e03978e-40d5-43e8-bc93-6894a57f9324");
  ASSERT_TRUE(ParseIdempotencyKey(R"("a \"quoted\" \\ key")", &key));
  EXPECT_EQ(key, R"(a "quoted" \ key)");
  ASSERT_TRUE(ParseIdempotencyKey("bare-key_1", &key));
  EXPECT_EQ(key, "bare-key_1");
  ASSERT_TRUE(ParseIdempotencyKey(std::string(255, 'k'), &key));
}

TEST(IdempotencyKeyTest, RefusesMalformedKeys) {
  std::string key;
  for (const std::string& bad :
       {std::string(""), std::string(R"("")"), std::string(R"("open)"), std::string(R"("a";p=1)"),
        std::string(R"("bad \n escape")"), std::string("two words"), std::string("tab\there"),
        std::string(256, 'k'), std::string("\"") + std::string(256, 'k') + "\"",
        std::string("caf\xc3\xa9")}) {
    EXPECT_FALSE(ParseIdempotencyKey(bad, &key)) << bad;
  }
}

TEST(IdempotencyDigestTest, ScopeKeysOfDifferentTuplesDiffer) {
  // Length prefixes: shifting bytes between parts must not give the same key.
  EXPECT_NE(IdempotencyScopeKey("r", "ab", "", "c"), IdempotencyScopeKey("r", "a", "", "bc"));
  EXPECT_NE(IdempotencyScopeKey("r", "k", "alice", "1"), IdempotencyScopeKey("r", "k", "bob", "1"));
  EXPECT_NE(IdempotencyScopeKey("r1", "k", "", "1"), IdempotencyScopeKey("r2", "k", "", "1"));
  EXPECT_EQ(IdempotencyScopeKey("r", "k", "", "1"), IdempotencyScopeKey("r", "k", "", "1"));
  EXPECT_NE(RequestDigest("POST", "/a"), RequestDigest("PATCH", "/a"));
  EXPECT_NE(RequestDigest("POST", "/a"), RequestDigest("POST", "/a?x=1"));
}

TEST(IdempotencyDigestTest, ForwardKeyIsBoundToTheFenceKey) {
  const std::string derived = DeriveForwardKey("pay", "acct:1", "key-1");
  EXPECT_EQ(derived.size(), 64u);
  EXPECT_EQ(derived, DeriveForwardKey("pay", "acct:1", "key-1"));
  EXPECT_NE(derived, DeriveForwardKey("pay", "acct:2", "key-1"));
  EXPECT_NE(derived, DeriveForwardKey("pay", "acct:1", "key-2"));
  EXPECT_EQ(derived.find("key-1"), std::string::npos);
}

TEST(IdempotencyDateTest, FormatsImfFixdate) {
  EXPECT_EQ(HttpDate(784111777000), "Sun, 06 Nov 1994 08:49:37 GMT");
}

TEST(StoredResponseTest, RoundTripsStatusFieldsAndBody) {
  StoredResponse response;
  response.status = 201;
  response.fields.insert("Content-Type", "application/json");
  response.fields.insert("Location", "/orders/7");
  response.fields.insert("Set-Cookie", "a=1");
  response.fields.insert("Set-Cookie", "b=2");
  response.body = std::string("{\"id\":7}\0binary", 15);
  StoredResponse decoded;
  ASSERT_TRUE(DecodeStoredResponse(EncodeStoredResponse(response), &decoded));
  EXPECT_EQ(decoded.status, 201u);
  EXPECT_EQ(decoded.body, response.body);
  EXPECT_EQ(decoded.fields["Location"], "/orders/7");
  EXPECT_EQ(decoded.fields.count("Set-Cookie"), 2u);
  const std::string encoded = EncodeStoredResponse(response);
  for (std::size_t length = 0; length < encoded.size(); ++length) {
    EXPECT_FALSE(DecodeStoredResponse(encoded.substr(0, length), &decoded)) << length;
  }
}

TEST(StoredResponseTest, FramingAndPerExchangeFieldsAreNotKept) {
  EXPECT_FALSE(IsStoredResponseField("content-length"));
  EXPECT_FALSE(IsStoredResponseField("Transfer-Encoding"));
  EXPECT_FALSE(IsStoredResponseField("X-Request-Id"));
  EXPECT_TRUE(IsStoredResponseField("Content-Type"));
  EXPECT_TRUE(IsStoredResponseField("ETag"));
}

}  // namespace
}  // namespace fencegate::gateway
