#include "lockstore/locks/lock_table.h"

#include <gtest/gtest.h>

#include "lockstore/locks/lock_memory_persistence.h"
#include "lockstore/locks/lock_owner.h"
#include "tests/lockstore/lock_test_support.h"

namespace fencegate::lockstore {
namespace {

using std::chrono::milliseconds;
using testing::AcquireProbe;
using testing::ManualLockClock;
using testing::RecordingFencer;
using Kind = AcquireResult::Kind;

constexpr milliseconds kTtl{1000};

class LockTableTest : public ::testing::Test {
 protected:
  LockTableOptions Options() {
    LockTableOptions options;
    options.rules = LockRules({{"orders-*", {"kv:{name}", "audit:{name}"}, milliseconds(0)},
                               {"delayed-*", {}, milliseconds(2000)}});
    options.now_unix_ms = [] { return std::int64_t{1'700'000'000'000}; };
    options.max_waiters_per_lock = 3;
    options.max_cached_locks = max_cached_locks_;
    return options;
  }
  std::unique_ptr<LockTable> NewTable() {
    auto table = std::make_unique<LockTable>(persistence_, clock_, &fencer_, nullptr, Options());
    EXPECT_TRUE(table->Load().ok());
    return table;
  }
  AcquireResult AcquireNow(LockTable& table, std::string_view name, milliseconds ttl = kTtl) {
    AcquireProbe probe;
    table.Acquire(name, ttl, milliseconds(0), probe.callback());
    EXPECT_TRUE(probe.result.has_value());
    return probe.result.value_or(AcquireResult{});
  }
  // Takes `name` for a test's setup, where only that it is held matters.
  void HoldNow(LockTable& table, std::string_view name, milliseconds ttl = kTtl) {
    EXPECT_EQ(AcquireNow(table, name, ttl).kind, AcquireResult::Kind::kGranted);
  }
  bool Release(LockTable& table, std::string_view name, const std::string& owner) {
    std::optional<ReleaseResult> released;
    table.Release(name, owner, [&](ReleaseResult r) { released = r; });
    EXPECT_TRUE(released.has_value());
    return released && released->released;
  }

  std::size_t max_cached_locks_ = 100000;
  MemoryLockPersistence persistence_;
  ManualLockClock clock_;
  RecordingFencer fencer_;
};

TEST_F(LockTableTest, GrantCarriesOwnerTokenFencingTokenAndTtl) {
  auto table = NewTable();
  const AcquireResult first = AcquireNow(*table, "job");
  ASSERT_EQ(first.kind, Kind::kGranted) << first.detail;
  EXPECT_TRUE(IsWellFormedOwnerToken(first.owner_token));
  EXPECT_EQ(first.token, 1u);
  EXPECT_EQ(first.ttl, kTtl);
  ASSERT_TRUE(Release(*table, "job", first.owner_token));
  const AcquireResult second = AcquireNow(*table, "job");
  ASSERT_EQ(second.kind, Kind::kGranted);
  EXPECT_EQ(second.token, 2u);
  EXPECT_NE(second.owner_token, first.owner_token);
}

TEST_F(LockTableTest, FailAtOnceWhenHeld) {
  auto table = NewTable();
  ASSERT_EQ(AcquireNow(*table, "job").kind, Kind::kGranted);
  clock_.Advance(milliseconds(300));
  const AcquireResult refused = AcquireNow(*table, "job");
  EXPECT_EQ(refused.kind, Kind::kHeld);
  EXPECT_EQ(refused.retry_after, milliseconds(700));
}

TEST_F(LockTableTest, InvalidNameAndTtlAreRefused) {
  auto table = NewTable();
  EXPECT_EQ(AcquireNow(*table, "has space").kind, Kind::kInvalid);
  EXPECT_EQ(AcquireNow(*table, "").kind, Kind::kInvalid);
  EXPECT_EQ(AcquireNow(*table, "job", milliseconds(1)).kind, Kind::kInvalid);
  EXPECT_EQ(AcquireNow(*table, "job", std::chrono::hours(2)).kind, Kind::kInvalid);
}

TEST_F(LockTableTest, WaitersAreServedInArrivalOrderOneAtATime) {
  auto table = NewTable();
  const AcquireResult holder = AcquireNow(*table, "job");
  AcquireProbe b, c, d;
  table->Acquire("job", kTtl, milliseconds(5000), b.callback());
  table->Acquire("job", kTtl, milliseconds(5000), c.callback());
  table->Acquire("job", kTtl, milliseconds(5000), d.callback());
  EXPECT_FALSE(b.result || c.result || d.result);

  ASSERT_TRUE(Release(*table, "job", holder.owner_token));
  // Exactly one waiter is woken: the first.
  ASSERT_TRUE(b.granted());
  EXPECT_FALSE(c.result.has_value());
  EXPECT_FALSE(d.result.has_value());
  EXPECT_EQ(b.result->token, 2u);

  ASSERT_TRUE(Release(*table, "job", b.result->owner_token));
  ASSERT_TRUE(c.granted());
  EXPECT_FALSE(d.result.has_value());
  EXPECT_EQ(c.result->token, 3u);
}

TEST_F(LockTableTest, NewcomerDoesNotOvertakeWaiters) {
  auto table = NewTable();
  const AcquireResult holder = AcquireNow(*table, "job");
  AcquireProbe waiter;
  table->Acquire("job", kTtl, milliseconds(5000), waiter.callback());
  ASSERT_TRUE(Release(*table, "job", holder.owner_token));
  ASSERT_TRUE(waiter.granted());
  EXPECT_EQ(AcquireNow(*table, "job").kind, Kind::kHeld);
}

TEST_F(LockTableTest, TooManyWaitersIsBusy) {
  auto table = NewTable();
  HoldNow(*table, "job");
  AcquireProbe w[4];
  for (auto& probe : w) table->Acquire("job", kTtl, milliseconds(5000), probe.callback());
  ASSERT_TRUE(w[3].result.has_value());
  EXPECT_EQ(w[3].result->kind, Kind::kBusy);
  EXPECT_FALSE(w[2].result.has_value());
}

TEST_F(LockTableTest, ExpiryHandsTheLockToTheNextWaiter) {
  auto table = NewTable();
  const AcquireResult holder = AcquireNow(*table, "job");
  AcquireProbe waiter;
  table->Acquire("job", kTtl, milliseconds(5000), waiter.callback());
  clock_.Advance(milliseconds(999));
  EXPECT_FALSE(waiter.result.has_value());
  clock_.Advance(milliseconds(1));
  ASSERT_TRUE(waiter.granted());
  EXPECT_EQ(waiter.result->token, 2u);
  EXPECT_EQ(waiter.result->waited, milliseconds(1000));
  // The old holder has lost it: renewal and release both say so, and change nothing.
  EXPECT_FALSE(table->Renew("job", holder.owner_token).renewed);
  EXPECT_FALSE(Release(*table, "job", holder.owner_token));
  EXPECT_TRUE(table->Renew("job", waiter.result->owner_token).renewed);
}

TEST_F(LockTableTest, WaitEndsWithHeldWhenTheDeadlinePasses) {
  auto table = NewTable();
  HoldNow(*table, "job", milliseconds(10000));
  AcquireProbe waiter;
  table->Acquire("job", kTtl, milliseconds(500), waiter.callback());
  clock_.Advance(milliseconds(499));
  EXPECT_FALSE(waiter.result.has_value());
  clock_.Advance(milliseconds(1));
  ASSERT_TRUE(waiter.result.has_value());
  EXPECT_EQ(waiter.result->kind, Kind::kHeld);
  EXPECT_EQ(table->Inspect("job")->waiters, 0u);
}

TEST_F(LockTableTest, RenewExtendsALiveLeaseAndALateRenewalFails) {
  auto table = NewTable();
  const AcquireResult holder = AcquireNow(*table, "job");
  clock_.Advance(milliseconds(800));
  const RenewResult renewed = table->Renew("job", holder.owner_token);
  EXPECT_TRUE(renewed.renewed);
  EXPECT_EQ(renewed.token, holder.token);
  clock_.Advance(milliseconds(800));  // 1600 ms after the grant, 800 after the renewal
  EXPECT_TRUE(table->Inspect("job")->held);
  // Past the renewed lease, before the timer processed it: the renewal is still late.
  clock_.AdvanceWithoutTimer(milliseconds(200));
  EXPECT_FALSE(table->Renew("job", holder.owner_token).renewed);
  EXPECT_FALSE(table->Inspect("job")->held);
}

TEST_F(LockTableTest, RenewWithAnotherOwnerTokenFails) {
  auto table = NewTable();
  HoldNow(*table, "job");
  std::string stranger;
  ASSERT_TRUE(NewOwnerToken(&stranger).ok());
  EXPECT_FALSE(table->Renew("job", stranger).renewed);
  EXPECT_FALSE(table->Renew("job", "not-hex").renewed);
  EXPECT_FALSE(table->Renew("nope", stranger).renewed);
}

TEST_F(LockTableTest, RetriedReleaseNeverFreesTheNextHoldersLock) {
  auto table = NewTable();
  const AcquireResult a = AcquireNow(*table, "job");
  ASSERT_TRUE(Release(*table, "job", a.owner_token));
  const AcquireResult b = AcquireNow(*table, "job");
  ASSERT_EQ(b.kind, Kind::kGranted);
  EXPECT_FALSE(Release(*table, "job", a.owner_token));  // the retry
  const auto view = table->Inspect("job");
  ASSERT_TRUE(view->held);
  EXPECT_EQ(view->holder_token, b.token);
  EXPECT_EQ(view->owner_id, OwnerId(OwnerHash(b.owner_token)));
}

TEST_F(LockTableTest, QuarantineDelaysTheNextGrantAfterAnExpiry) {
  auto table = NewTable();
  const AcquireResult holder = AcquireNow(*table, "delayed-1");
  clock_.Advance(kTtl);  // expires without release
  const AcquireResult refused = AcquireNow(*table, "delayed-1");
  EXPECT_EQ(refused.kind, Kind::kQuarantined);
  EXPECT_EQ(refused.retry_after, milliseconds(2000));
  AcquireProbe waiter;
  table->Acquire("delayed-1", kTtl, milliseconds(5000), waiter.callback());
  clock_.Advance(milliseconds(1999));
  EXPECT_FALSE(waiter.result.has_value());
  clock_.Advance(milliseconds(1));
  ASSERT_TRUE(waiter.granted());
  EXPECT_GT(waiter.result->token, holder.token);
}

TEST_F(LockTableTest, ReleaseDoesNotQuarantine) {
  auto table = NewTable();
  const AcquireResult holder = AcquireNow(*table, "delayed-2");
  ASSERT_TRUE(Release(*table, "delayed-2", holder.owner_token));
  EXPECT_EQ(AcquireNow(*table, "delayed-2").kind, Kind::kGranted);
}

TEST_F(LockTableTest, GrantIsAnsweredOnlyOnceDurable) {
  persistence_.SetDeferred(true);
  auto table = NewTable();
  AcquireProbe probe;
  table->Acquire("job", kTtl, milliseconds(0), probe.callback());
  EXPECT_FALSE(probe.result.has_value());
  EXPECT_TRUE(table->Inspect("job")->granting);
  EXPECT_EQ(persistence_.RunPending(), 1u);
  ASSERT_TRUE(probe.granted());
  EXPECT_EQ(persistence_.synced_writes(), 1u);
}

TEST_F(LockTableTest, StoreFailureFailsTheGrantAndFreesTheLock) {
  auto table = NewTable();
  persistence_.FailNextWrites(Status::IOError("disk gone"));
  EXPECT_EQ(AcquireNow(*table, "job").kind, Kind::kStoreError);
  persistence_.FailNextWrites(Status::Ok());
  const AcquireResult later = AcquireNow(*table, "job");
  ASSERT_EQ(later.kind, Kind::kGranted);
  EXPECT_EQ(later.token, 2u);  // the failed grant's token is never handed out again
}

TEST_F(LockTableTest, EagerFencingRaisesBoundKeysBeforeTheAnswer) {
  fencer_.hold = true;
  auto table = NewTable();
  AcquireProbe probe;
  table->Acquire("orders-7", kTtl, milliseconds(0), probe.callback());
  ASSERT_EQ(fencer_.calls.size(), 1u);
  EXPECT_EQ(fencer_.calls[0].keys, (std::vector<std::string>{"kv:orders-7", "audit:orders-7"}));
  EXPECT_EQ(fencer_.calls[0].token, 1u);
  EXPECT_FALSE(probe.result.has_value());  // not answered before the fences stand
  fencer_.held[0]();
  ASSERT_TRUE(probe.granted());
  ASSERT_EQ(probe.result->fences.size(), 2u);
  EXPECT_TRUE(probe.result->fences[0].raised);
  // Unbound locks raise nothing.
  fencer_.hold = false;
  HoldNow(*table, "job");
  EXPECT_EQ(fencer_.calls.size(), 1u);
}

TEST_F(LockTableTest, ForcedReleaseRaisesTheFenceAndWritesAnAuditRecord) {
  auto table = NewTable();
  const AcquireResult holder = AcquireNow(*table, "orders-9");
  AcquireProbe waiter;
  table->Acquire("orders-9", kTtl, milliseconds(5000), waiter.callback());
  std::optional<ForceReleaseResult> forced;
  table->ForceRelease("orders-9", "alice", "stuck job", [&](ForceReleaseResult r) { forced = r; });
  ASSERT_TRUE(forced.has_value());
  ASSERT_TRUE(forced->status.ok()) << forced->status.ToString();
  EXPECT_EQ(forced->audit.operator_id, "alice");
  EXPECT_EQ(forced->audit.reason, "stuck job");
  EXPECT_EQ(forced->audit.previous_token, holder.token);
  EXPECT_EQ(forced->audit.previous_owner_id, OwnerId(OwnerHash(holder.owner_token)));
  EXPECT_EQ(forced->audit.fence_token, holder.token + 1);
  EXPECT_EQ(forced->audit.sequence, 1u);
  // The fences went to the new token; the waiter got the lock with a higher one still.
  ASSERT_GE(fencer_.calls.size(), 2u);
  bool raised_to_fence_token = false;
  for (const auto& call : fencer_.calls) {
    raised_to_fence_token |= call.token == forced->audit.fence_token;
  }
  EXPECT_TRUE(raised_to_fence_token);
  ASSERT_TRUE(waiter.granted());
  EXPECT_EQ(waiter.result->token, holder.token + 2);
  EXPECT_FALSE(table->Renew("orders-9", holder.owner_token).renewed);
  const auto audit = persistence_.RecentLockAudit(10);
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0].lock, "orders-9");
}

TEST_F(LockTableTest, ForcedReleaseOfAFreeLockIsNotFound) {
  auto table = NewTable();
  std::optional<ForceReleaseResult> forced;
  table->ForceRelease("job", "alice", "why", [&](ForceReleaseResult r) { forced = r; });
  ASSERT_TRUE(forced.has_value());
  EXPECT_EQ(forced->status.code(), Status::Code::kNotFound);
}

TEST_F(LockTableTest, CancelledWaiterIsSkipped) {
  auto table = NewTable();
  const AcquireResult holder = AcquireNow(*table, "job");
  AcquireProbe first, second;
  const auto id = table->Acquire("job", kTtl, milliseconds(5000), first.callback());
  table->Acquire("job", kTtl, milliseconds(5000), second.callback());
  table->CancelWait("job", id);
  ASSERT_TRUE(first.result.has_value());
  EXPECT_EQ(first.result->kind, Kind::kCancelled);
  ASSERT_TRUE(Release(*table, "job", holder.owner_token));
  EXPECT_TRUE(second.granted());
}

TEST_F(LockTableTest, RestartKeepsTokensIncreasingAndLiveLeasesHeld) {
  std::string owner;
  Token token = 0;
  {
    auto table = NewTable();
    const AcquireResult a = AcquireNow(*table, "job");
    ASSERT_TRUE(Release(*table, "job", a.owner_token));
    const AcquireResult b = AcquireNow(*table, "job");
    owner = b.owner_token;
    token = b.token;
    clock_.Advance(milliseconds(900));
  }
  // The restart: a new table over the same records, time moving on.
  auto table = NewTable();
  clock_.Advance(milliseconds(900));  // past the old lease, within a full TTL of the restart
  EXPECT_EQ(AcquireNow(*table, "job").kind, Kind::kHeld);
  EXPECT_TRUE(table->Renew("job", owner).renewed);  // the old holder can carry on
  ASSERT_TRUE(Release(*table, "job", owner));
  const AcquireResult next = AcquireNow(*table, "job");
  ASSERT_EQ(next.kind, Kind::kGranted);
  EXPECT_EQ(next.token, token + 1);
}

TEST_F(LockTableTest, RestartHoldsAnUnreleasedLockForAFullTtl) {
  {
    auto table = NewTable();
    HoldNow(*table, "job");
  }
  auto table = NewTable();
  clock_.Advance(milliseconds(999));
  EXPECT_EQ(AcquireNow(*table, "job").kind, Kind::kHeld);
  clock_.Advance(milliseconds(1));
  const AcquireResult next = AcquireNow(*table, "job");
  ASSERT_EQ(next.kind, Kind::kGranted);
  EXPECT_EQ(next.token, 2u);
}

TEST_F(LockTableTest, EvictedIdleLocksComeBackWithTheirTokens) {
  max_cached_locks_ = 3;
  auto table = NewTable();
  const AcquireResult held = AcquireNow(*table, "held");
  for (int round = 1; round <= 3; ++round) {
    for (const char* name : {"a", "b", "c", "d", "e"}) {
      const AcquireResult granted = AcquireNow(*table, name);
      ASSERT_EQ(granted.kind, Kind::kGranted) << name;
      EXPECT_EQ(granted.token, static_cast<Token>(round)) << name;
      ASSERT_TRUE(Release(*table, name, granted.owner_token));
    }
    EXPECT_LE(table->List().size(), 4u);  // the cap, plus the one just used
  }
  // The held lock was never dropped, whatever the churn.
  EXPECT_TRUE(table->Inspect("held")->held);
  EXPECT_TRUE(table->Renew("held", held.owner_token).renewed);
  // An evicted lock is still visible to operators, from the store.
  const auto view = table->Inspect("a");
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(view->last_token, 3u);
  EXPECT_FALSE(view->held);
}

TEST_F(LockTableTest, ALockWithAWriteInFlightIsNotEvicted) {
  max_cached_locks_ = 1;
  auto table = NewTable();
  const AcquireResult a = AcquireNow(*table, "a");
  persistence_.SetDeferred(true);
  std::optional<ReleaseResult> released;
  table->Release("a", a.owner_token, [&](ReleaseResult r) { released = r; });
  // "a" is free in memory but its record on disk still says held with token 1; churn must not
  // drop it and re-read that record.
  AcquireProbe b;
  table->Acquire("b", kTtl, milliseconds(0), b.callback());
  persistence_.RunPending();
  persistence_.SetDeferred(false);
  ASSERT_TRUE(released && released->released);
  ASSERT_TRUE(b.granted());
  const AcquireResult again = AcquireNow(*table, "a");
  ASSERT_EQ(again.kind, Kind::kGranted) << again.detail;
  EXPECT_EQ(again.token, 2u);
}

TEST_F(LockTableTest, RestartLoadsOnlyLiveLocksAndTokensStillContinue) {
  {
    auto table = NewTable();
    for (const char* name : {"a", "b"}) {
      const AcquireResult granted = AcquireNow(*table, name);
      ASSERT_TRUE(Release(*table, name, granted.owner_token));
    }
    HoldNow(*table, "c");
  }
  auto table = NewTable();
  const auto in_memory = table->List();
  ASSERT_EQ(in_memory.size(), 1u);
  EXPECT_EQ(in_memory[0].name, "c");
  EXPECT_EQ(AcquireNow(*table, "a").token, 2u);
}

TEST_F(LockTableTest, StaleTokensAreExplainedByHowTheirLeasesEnded) {
  auto table = NewTable();
  const AcquireResult released = AcquireNow(*table, "orders-1");
  ASSERT_TRUE(Release(*table, "orders-1", released.owner_token));
  const AcquireResult expired = AcquireNow(*table, "orders-1");
  clock_.Advance(kTtl);
  const AcquireResult forced = AcquireNow(*table, "orders-1");
  ASSERT_EQ(forced.kind, Kind::kGranted) << forced.detail;
  std::optional<ForceReleaseResult> force;
  table->ForceRelease("orders-1", "alice", "stuck", [&](ForceReleaseResult r) { force = r; });
  ASSERT_TRUE(force.has_value() && force->status.ok());
  const AcquireResult current = AcquireNow(*table, "orders-1");
  ASSERT_EQ(current.kind, Kind::kGranted) << current.detail;

  EXPECT_EQ(table->ExplainStaleToken("kv:orders-1", released.token).reason, StaleReason::kReleased);
  EXPECT_EQ(table->ExplainStaleToken("audit:orders-1", expired.token).reason,
            StaleReason::kLeaseExpired);
  const StaleTokenExplanation by_operator = table->ExplainStaleToken("kv:orders-1", forced.token);
  EXPECT_EQ(by_operator.reason, StaleReason::kForceReleased);
  EXPECT_EQ(by_operator.audit_id, force->audit.sequence);
  // The holder's own token, and a key none of the lock's grants raised: superseded.
  EXPECT_EQ(table->ExplainStaleToken("kv:orders-1", current.token).reason,
            StaleReason::kSuperseded);
  EXPECT_EQ(table->ExplainStaleToken("kv:orders-2", released.token).reason,
            StaleReason::kSuperseded);
}

TEST_F(LockTableTest, LocksWithoutFenceKeysExplainNothing) {
  auto table = NewTable();
  const AcquireResult granted = AcquireNow(*table, "job");
  ASSERT_TRUE(Release(*table, "job", granted.owner_token));
  EXPECT_EQ(table->ExplainStaleToken("job", granted.token).reason, StaleReason::kSuperseded);
}

}  // namespace
}  // namespace fencegate::lockstore
