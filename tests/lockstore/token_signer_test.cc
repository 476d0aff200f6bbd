#include "lockstore/locks/token_signer.h"

#include <gtest/gtest.h>

#include <string>

namespace fencegate::lockstore {
namespace {

constexpr std::int64_t kNow = 1'800'000'000'000;
const std::string kSecret1(40, 'a');
const std::string kSecret2(40, 'b');

LockRules Rules() { return LockRules({{"orders-*", {"kv:{name}", "audit:{name}"}, {}}}); }

TokenSigner Signer(std::vector<TokenKey> keys, std::string signing) {
  return TokenSigner(TokenKeyring{std::move(keys), std::move(signing)}, Rules());
}

// Replaces the value of `name` in a signature field.
std::string With(std::string field, const std::string& name, const std::string& value) {
  const auto begin = field.find(name + "=") + name.size() + 1;
  const auto end = field.find(';', begin);
  field.replace(begin, end == std::string::npos ? std::string::npos : end - begin, value);
  return field;
}

TEST(TokenSignerTest, SignedTokenVerifiesForTheLocksFenceKeys) {
  const TokenSigner signer = Signer({{"k1", kSecret1}}, "k1");
  const std::string field = signer.Sign("orders-42", 7, kNow + 30000);
  EXPECT_EQ(field.rfind("kid=k1;exp=1800000030000;scope=orders-42;mac=", 0), 0u) << field;
  EXPECT_EQ(signer.Verify(field, 7, "kv:orders-42", kNow), SignatureCheck::kValid);
  EXPECT_EQ(signer.Verify(field, 7, "audit:orders-42", kNow), SignatureCheck::kValid);
}

TEST(TokenSignerTest, AnyChangeToTokenScopeOrExpiryIsForged) {
  const TokenSigner signer = Signer({{"k1", kSecret1}}, "k1");
  const std::string field = signer.Sign("orders-42", 7, kNow + 30000);
  EXPECT_EQ(signer.Verify(field, 8, "kv:orders-42", kNow), SignatureCheck::kForged);
  EXPECT_EQ(signer.Verify(field, 9223372036854775807ull, "kv:orders-42", kNow),
            SignatureCheck::kForged);
  EXPECT_EQ(signer.Verify(With(field, "exp", "1900000000000"), 7, "kv:orders-42", kNow),
            SignatureCheck::kForged);
  EXPECT_EQ(signer.Verify(With(field, "scope", "orders-43"), 7, "kv:orders-43", kNow),
            SignatureCheck::kForged);
  std::string flipped = field;
  flipped.back() = flipped.back() == 'A' ? 'B' : 'A';
  EXPECT_EQ(signer.Verify(flipped, 7, "kv:orders-42", kNow), SignatureCheck::kForged);
}

TEST(TokenSignerTest, AnotherKeysSignatureIsForged) {
  const TokenSigner ours = Signer({{"k1", kSecret1}}, "k1");
  const TokenSigner theirs = Signer({{"k1", kSecret2}}, "k1");
  EXPECT_EQ(ours.Verify(theirs.Sign("orders-1", 3, kNow + 1000), 3, "kv:orders-1", kNow),
            SignatureCheck::kForged);
  EXPECT_EQ(
      ours.Verify(With(ours.Sign("orders-1", 3, kNow + 1000), "kid", "k9"), 3, "kv:orders-1", kNow),
      SignatureCheck::kForged);
}

TEST(TokenSignerTest, ExpiredAtAndAfterTheLeaseEnd) {
  const TokenSigner signer = Signer({{"k1", kSecret1}}, "k1");
  const std::string field = signer.Sign("orders-1", 3, kNow);
  EXPECT_EQ(signer.Verify(field, 3, "kv:orders-1", kNow - 1), SignatureCheck::kValid);
  EXPECT_EQ(signer.Verify(field, 3, "kv:orders-1", kNow), SignatureCheck::kExpired);
  EXPECT_EQ(signer.Verify(field, 3, "kv:orders-1", kNow + 1), SignatureCheck::kExpired);
}

TEST(TokenSignerTest, OtherFenceKeyIsWrongScope) {
  const TokenSigner signer = Signer({{"k1", kSecret1}}, "k1");
  const std::string field = signer.Sign("orders-1", 3, kNow + 1000);
  EXPECT_EQ(signer.Verify(field, 3, "kv:orders-2", kNow), SignatureCheck::kWrongScope);
  // A lock no rule binds to fence keys cannot vouch for any fence key.
  EXPECT_EQ(signer.Verify(signer.Sign("misc", 3, kNow + 1000), 3, "kv:misc", kNow),
            SignatureCheck::kWrongScope);
}

TEST(TokenSignerTest, RotationVerifiesEveryListedKeyAndSignsWithOne) {
  const TokenSigner before = Signer({{"k1", kSecret1}}, "k1");
  const TokenSigner during = Signer({{"k1", kSecret1}, {"k2", kSecret2}}, "k2");
  const TokenSigner after = Signer({{"k2", kSecret2}}, "k2");
  const std::string old_field = before.Sign("orders-1", 3, kNow + 1000);
  const std::string new_field = during.Sign("orders-1", 4, kNow + 1000);
  EXPECT_EQ(new_field.rfind("kid=k2;", 0), 0u);
  EXPECT_EQ(during.Verify(old_field, 3, "kv:orders-1", kNow), SignatureCheck::kValid);
  EXPECT_EQ(during.Verify(new_field, 4, "kv:orders-1", kNow), SignatureCheck::kValid);
  EXPECT_EQ(after.Verify(old_field, 3, "kv:orders-1", kNow), SignatureCheck::kForged);
  EXPECT_EQ(after.Verify(new_field, 4, "kv:orders-1", kNow), SignatureCheck::kValid);
}

TEST(TokenSignerTest, FieldsInAnyOrderWithSpacesAreAccepted) {
  const TokenSigner signer = Signer({{"k1", kSecret1}}, "k1");
  const std::string field = signer.Sign("orders-1", 3, kNow + 1000);
  const std::string mac = field.substr(field.find("mac=") + 4);
  EXPECT_EQ(signer.Verify(" mac=" + mac + " ; scope=orders-1;exp=1800000001000 ;kid=k1", 3,
                          "kv:orders-1", kNow),
            SignatureCheck::kValid);
}

TEST(TokenSignerTest, MalformedFields) {
  const TokenSigner signer = Signer({{"k1", kSecret1}}, "k1");
  const std::string field = signer.Sign("orders-1", 3, kNow + 1000);
  for (const std::string& bad :
       {std::string(), std::string("garbage"), field + ";kid=k1", field + ";extra=1",
        field.substr(0, field.size() - 1), With(field, "exp", "-5"), With(field, "exp", "1e12"),
        With(field, "exp", ""), With(field, "scope", "a/b"), With(field, "kid", ""),
        With(field, "kid", "k 1"), field + ";",
        // 43 characters that are not base64url (standard base64, padding, a space).
        With(field, "mac", std::string(42, 'A') + "+"),
        With(field, "mac", std::string(42, 'A') + "/"),
        With(field, "mac", std::string(42, 'A') + "="),
        With(field, "mac", std::string(20, 'A') + " " + std::string(22, 'A'))}) {
    EXPECT_EQ(signer.Verify(bad, 3, "kv:orders-1", kNow), SignatureCheck::kMalformed) << bad;
  }
}

TEST(TokenSignerTest, KeyIds) {
  EXPECT_TRUE(IsValidTokenKeyId("k1"));
  EXPECT_TRUE(IsValidTokenKeyId("2026-12.key_A"));
  EXPECT_FALSE(IsValidTokenKeyId(""));
  EXPECT_FALSE(IsValidTokenKeyId("k;1"));
  EXPECT_FALSE(IsValidTokenKeyId(std::string(65, 'k')));
}

}  // namespace
}  // namespace fencegate::lockstore
