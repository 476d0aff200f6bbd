#include <gtest/gtest.h>

#include <future>

#include "lockstore/locks/lock_table.h"
#include "lockstore/rocksdb/rocksdb_fence_store_impl.h"
#include "tests/lockstore/lock_test_support.h"
#include "tests/support/temp_dir.h"

namespace fencegate::lockstore {
namespace {

using std::chrono::milliseconds;
using testing::AcquireProbe;
using testing::ManualLockClock;

// The lock table over the real RocksDB store: its callbacks come from the writer thread.
class LockRocksDbTest : public ::testing::Test {
 protected:
  void Open(std::size_t max_cached_locks = 100000) {
    RocksDbFenceStoreOptions options;
    options.path = dir_.Join("db");
    ASSERT_TRUE(RocksDbFenceStore::Open(options, &store_).ok());
    LockTableOptions table_options;
    table_options.now_unix_ms = [] { return std::int64_t{1'700'000'000'000}; };
    table_options.max_cached_locks = max_cached_locks;
    table_ = std::make_unique<LockTable>(*store_, clock_, nullptr, nullptr, table_options);
    ASSERT_TRUE(table_->Load().ok());
  }
  void Close() {
    table_.reset();
    store_.reset();
  }
  AcquireResult Acquire(std::string_view name) {
    std::promise<AcquireResult> done;
    table_->Acquire(name, milliseconds(1000), milliseconds(0),
                    [&](AcquireResult r) { done.set_value(std::move(r)); });
    return done.get_future().get();
  }
  void Release(std::string_view name, const std::string& owner) {
    std::promise<ReleaseResult> done;
    table_->Release(name, owner, [&](ReleaseResult r) { done.set_value(r); });
    const ReleaseResult result = done.get_future().get();
    EXPECT_TRUE(result.released);
    EXPECT_TRUE(result.status.ok());
  }

  integration::TempDir dir_;
  ManualLockClock clock_;
  std::unique_ptr<RocksDbFenceStore> store_;
  std::unique_ptr<LockTable> table_;
};

TEST_F(LockRocksDbTest, TokensContinueAcrossReopen) {
  Open();
  Token last = 0;
  for (int i = 0; i < 5; ++i) {
    const AcquireResult granted = Acquire("job");
    ASSERT_EQ(granted.kind, AcquireResult::Kind::kGranted) << granted.detail;
    EXPECT_GT(granted.token, last);
    last = granted.token;
    Release("job", granted.owner_token);
  }
  Close();
  Open();
  const AcquireResult after = Acquire("job");
  ASSERT_EQ(after.kind, AcquireResult::Kind::kGranted);
  EXPECT_EQ(after.token, last + 1);
}

TEST_F(LockRocksDbTest, HeldLockAndAuditSurviveReopen) {
  Open();
  const AcquireResult held = Acquire("job");
  const AcquireResult other = Acquire("other");
  std::promise<ForceReleaseResult> forced;
  table_->ForceRelease("other", "bob", "maintenance",
                       [&](ForceReleaseResult r) { forced.set_value(std::move(r)); });
  const ForceReleaseResult result = forced.get_future().get();
  ASSERT_TRUE(result.status.ok()) << result.status.ToString();
  Close();
  Open();
  // Still held by the same owner after the restart, who can renew.
  EXPECT_EQ(Acquire("job").kind, AcquireResult::Kind::kHeld);
  EXPECT_TRUE(table_->Renew("job", held.owner_token).renewed);
  // The forced release consumed a token: the next grant is above it.
  const AcquireResult next = Acquire("other");
  ASSERT_EQ(next.kind, AcquireResult::Kind::kGranted);
  EXPECT_EQ(next.token, other.token + 2);
  const auto audit = store_->RecentLockAudit(10);
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0].operator_id, "bob");
  EXPECT_EQ(audit[0].reason, "maintenance");
  EXPECT_EQ(audit[0].previous_token, other.token);
  EXPECT_EQ(audit[0].fence_token, other.token + 1);
  EXPECT_EQ(audit[0].sequence, result.audit.sequence);
}

TEST_F(LockRocksDbTest, GrantsAreSyncedWrites) {
  Open();
  const auto before = store_->stats().sync_writes;
  ASSERT_EQ(Acquire("job").kind, AcquireResult::Kind::kGranted);
  EXPECT_EQ(store_->stats().sync_writes, before + 1);
}

TEST_F(LockRocksDbTest, EvictedLocksAreReadBackWithTheirTokens) {
  Open(/*max_cached_locks=*/2);
  for (Token round = 1; round <= 3; ++round) {
    for (int i = 0; i < 10; ++i) {
      const std::string name = "lock-" + std::to_string(i);
      const AcquireResult granted = Acquire(name);
      ASSERT_EQ(granted.kind, AcquireResult::Kind::kGranted) << granted.detail;
      EXPECT_EQ(granted.token, round) << name;
      Release(name, granted.owner_token);
    }
  }
  EXPECT_LE(table_->List().size(), 3u);
  const auto view = table_->Inspect("lock-0");
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(view->last_token, 3u);
  EXPECT_FALSE(table_->Inspect("never").has_value());
}

}  // namespace
}  // namespace fencegate::lockstore
