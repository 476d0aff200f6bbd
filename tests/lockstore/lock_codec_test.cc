#include <gtest/gtest.h>

#include "lockstore/codec/lock_record_codec.h"
#include "lockstore/locks/lock_owner.h"

namespace fencegate::lockstore {
namespace {

TEST(LockCodecTest, LockRecordRoundTrips) {
  LockRecord record;
  record.last_token = kMaxToken;
  record.state = LockRecord::State::kHeld;
  record.owner_hash = OwnerHash("0123456789abcdef0123456789abcdef");
  record.ttl_ms = 30000;
  record.acquired_at_unix_ms = 1'700'000'000'123;
  LockRecord decoded;
  ASSERT_TRUE(DecodeLockValue(EncodeLockValue(record), &decoded).ok());
  EXPECT_EQ(decoded.last_token, record.last_token);
  EXPECT_EQ(decoded.state, record.state);
  EXPECT_EQ(decoded.owner_hash, record.owner_hash);
  EXPECT_EQ(decoded.ttl_ms, record.ttl_ms);
  EXPECT_EQ(decoded.acquired_at_unix_ms, record.acquired_at_unix_ms);
  const std::string encoded = EncodeLockValue(record);
  EXPECT_FALSE(DecodeLockValue(encoded.substr(0, encoded.size() - 1), &decoded).ok());
  EXPECT_FALSE(DecodeLockValue("", &decoded).ok());
}

TEST(LockCodecTest, AuditRecordRoundTrips) {
  LockAuditRecord record{0, 1'700'000'000'000, "orders-1", "alice", "stuck", "abc123", 7, 8};
  LockAuditRecord decoded;
  ASSERT_TRUE(DecodeLockAuditValue(EncodeLockAuditValue(record), &decoded).ok());
  EXPECT_EQ(decoded.lock, "orders-1");
  EXPECT_EQ(decoded.operator_id, "alice");
  EXPECT_EQ(decoded.reason, "stuck");
  EXPECT_EQ(decoded.previous_owner_id, "abc123");
  EXPECT_EQ(decoded.previous_token, 7u);
  EXPECT_EQ(decoded.fence_token, 8u);
  EXPECT_EQ(decoded.at_unix_ms, record.at_unix_ms);
}

TEST(LockOwnerTest, TokensAreRandomHexAndHashedForDisplay) {
  std::string a, b;
  ASSERT_TRUE(NewOwnerToken(&a).ok());
  ASSERT_TRUE(NewOwnerToken(&b).ok());
  EXPECT_TRUE(IsWellFormedOwnerToken(a));
  EXPECT_NE(a, b);
  EXPECT_FALSE(IsWellFormedOwnerToken("0123456789ABCDEF0123456789abcdef"));
  EXPECT_FALSE(IsWellFormedOwnerToken("0123"));
  // SHA-256("abc"), the FIPS 180-2 test vector.
  EXPECT_EQ(OwnerHash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(OwnerId(OwnerHash(a)).size(), 12u);
  EXPECT_EQ(OwnerHash(a).find(a), std::string::npos);
}

}  // namespace
}  // namespace fencegate::lockstore
