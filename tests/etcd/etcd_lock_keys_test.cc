// The etcd lock service's key layout and values, without etcd: queue order, the counter, and
// that foreign or damaged keys are skipped rather than taken for a holder.
#include "lockstore/etcd/etcd_lock_keys.h"

#include <gtest/gtest.h>

namespace fencegate::lockstore::etcd {
namespace {

EtcdKeyValue Kv(std::string key, std::string value, std::int64_t create, std::int64_t mod,
                std::int64_t lease = 0) {
  return {std::move(key), std::move(value), create, mod, lease};
}

TEST(EtcdLockKeysTest, KeysStayUnderTheLocksOwnPrefix) {
  EXPECT_EQ(EtcdLockCounterKey("/gw/", "job"), "/gw/locks/job/token");
  EXPECT_EQ(EtcdLockQueueKey("/gw/", "job", 0x1234), "/gw/locks/job/q/0000000000001234");
  EXPECT_EQ(EtcdLockAuditKey("/gw/", "job", 255), "/gw/lock-audit/job/00000000000000ff");
  // "job" and "job2" never share a prefix: the name is followed by '/'.
  EXPECT_FALSE(EtcdLockCounterKey("/gw/", "job2").starts_with(EtcdLockPrefix("/gw/", "job")));
}

TEST(EtcdLockKeysTest, EntryAndAuditRoundTrip) {
  const EtcdLockEntry entry{std::string(64, 'a'), 30000, 1700000000000, 42};
  EtcdLockEntry decoded;
  ASSERT_TRUE(DecodeEtcdLockEntry(EncodeEtcdLockEntry(entry), &decoded));
  EXPECT_EQ(decoded.owner_hash, entry.owner_hash);
  EXPECT_EQ(decoded.ttl_ms, 30000);
  EXPECT_EQ(decoded.acquired_at_unix_ms, 1700000000000);
  EXPECT_EQ(decoded.token, 42u);
  EXPECT_FALSE(DecodeEtcdLockEntry("{\"owner_hash\":\"x\"}", &decoded));
  EXPECT_FALSE(DecodeEtcdLockEntry("not json", &decoded));

  LockAuditRecord audit;
  audit.at_unix_ms = 5;
  audit.lock = "job";
  audit.operator_id = "alice";
  audit.reason = "wedged \"worker\"";
  audit.previous_owner_id = "abcdef012345";
  audit.previous_token = 7;
  audit.fence_token = 8;
  LockAuditRecord back;
  ASSERT_TRUE(DecodeEtcdLockAudit(EncodeEtcdLockAudit(audit), &back));
  EXPECT_EQ(back.reason, audit.reason);
  EXPECT_EQ(back.operator_id, "alice");
  EXPECT_EQ(back.previous_token, 7u);
  EXPECT_EQ(back.fence_token, 8u);
}

// A negative token is corrupt, in whichever token field it stands.
TEST(EtcdLockKeysTest, NegativeTokensAreRefused) {
  EtcdLockEntry entry;
  EXPECT_TRUE(
      DecodeEtcdLockEntry(R"({"owner_hash":"x","ttl_ms":1,"acquired_at_ms":2,"token":0})", &entry));
  EXPECT_FALSE(DecodeEtcdLockEntry(R"({"owner_hash":"x","ttl_ms":1,"acquired_at_ms":2,"token":-1})",
                                   &entry));

  const std::string audit_head =
      R"({"at_ms":5,"lock":"job","operator":"alice","reason":"r","previous_owner_id":"o",)";
  LockAuditRecord audit;
  EXPECT_TRUE(DecodeEtcdLockAudit(audit_head + R"("previous_token":0,"fence_token":1})", &audit));
  EXPECT_FALSE(DecodeEtcdLockAudit(audit_head + R"("previous_token":-1,"fence_token":1})", &audit));
  EXPECT_FALSE(DecodeEtcdLockAudit(audit_head + R"("previous_token":0,"fence_token":-1})", &audit));
}

TEST(EtcdLockKeysTest, GroupsByLockOrdersByCreateRevisionAndSkipsForeignKeys) {
  const std::string holder = EncodeEtcdLockEntry({"h", 1000, 1, 3});
  const std::string waiting = EncodeEtcdLockEntry({"w", 1000, 0, 0});
  std::size_t skipped = 0;
  const auto locks = GroupEtcdLocks(
      "/gw/",
      {Kv("/gw/locks/job/q/0000000000000002", waiting, 20, 20, 2),
       Kv("/gw/locks/job/q/0000000000000001", holder, 10, 15, 1),
       Kv("/gw/locks/job/token", "3", 5, 15), Kv("/gw/locks/other/token", "9", 6, 6),
       Kv("/gw/locks/job/q/0000000000000003", "garbage", 30, 30, 3),
       Kv("/gw/locks/job/token-typo", "1", 7, 7), Kv("/gw/locks/bad/token", "x1", 8, 8)},
      &skipped);
  EXPECT_EQ(skipped, 3u);
  ASSERT_EQ(locks.count("job"), 1u);
  const EtcdLockState& job = locks.at("job");
  EXPECT_EQ(job.last_token, 3u);
  EXPECT_EQ(job.counter_mod_revision, 15);
  ASSERT_EQ(job.queue.size(), 2u);
  EXPECT_EQ(job.queue[0].create_revision, 10);  // the holder first, whatever the read order
  EXPECT_EQ(job.queue[0].lease, 1);
  EXPECT_TRUE(job.held());
  EXPECT_EQ(job.queue[1].entry.owner_hash, "w");
  EXPECT_FALSE(locks.at("other").held());
  EXPECT_EQ(locks.at("other").last_token, 9u);
}

}  // namespace
}  // namespace fencegate::lockstore::etcd
