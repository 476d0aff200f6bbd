#include "lockstore/fence/memory_fence_store.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/lockstore/fence_listing_checks.h"

namespace fencegate::lockstore {
namespace {

std::optional<FenceRecord> GetSync(FenceStore& store, std::string_view key) {
  std::optional<FenceRecord> out;
  store.Get(key, [&](Status status, std::optional<FenceRecord> record) {
    EXPECT_TRUE(status.ok());
    out = record;
  });
  return out;
}

TEST(MemoryFenceStoreTest, UnknownKeyReadsAsNothing) {
  MemoryFenceStore store;
  EXPECT_EQ(GetSync(store, "k"), std::nullopt);
  EXPECT_TRUE(store.Ready());
  EXPECT_TRUE(store.Flush().ok());
}

TEST(MemoryFenceStoreTest, AdvanceRaisesAndNeverLowers) {
  MemoryFenceStore store;
  std::vector<Token> results;
  auto record = [&](Status status, FenceRecord r) {
    ASSERT_TRUE(status.ok());
    results.push_back(r.highest);
  };
  store.Advance("k", 5, 100, record);
  store.Advance("k", 3, 200, record);
  store.Advance("k", 7, 300, record);
  EXPECT_EQ(results, (std::vector<Token>{5, 5, 7}));
  ASSERT_TRUE(GetSync(store, "k").has_value());
  EXPECT_EQ(GetSync(store, "k")->highest, 7u);
  EXPECT_EQ(GetSync(store, "k")->advanced_at_ms, 300);
  EXPECT_EQ(store.advance_calls(), 3u);
}

TEST(MemoryFenceStoreTest, DeferredModeQueuesUntilRunPending) {
  MemoryFenceStore store;
  store.SetDeferred(true);
  int called = 0;
  store.Advance("k", 5, 0, [&](Status status, FenceRecord r) {
    EXPECT_TRUE(status.ok());
    EXPECT_EQ(r.highest, 5u);
    ++called;
  });
  EXPECT_EQ(called, 0);
  EXPECT_EQ(GetSync(store, "k"), std::nullopt);
  EXPECT_EQ(store.RunPending(), 1u);
  EXPECT_EQ(called, 1);
  EXPECT_EQ(store.RunPending(), 0u);
}

TEST(MemoryFenceStoreTest, FailuresApplyNothingUntilCleared) {
  MemoryFenceStore store;
  store.FailNextAdvances(Status::IOError("disk gone"));
  Status seen;
  store.Advance("k", 5, 0, [&](Status status, FenceRecord) { seen = status; });
  EXPECT_EQ(seen.code(), Status::Code::kIOError);
  EXPECT_EQ(GetSync(store, "k"), std::nullopt);

  store.FailNextAdvances(Status::Ok());
  store.Advance("k", 5, 0, [&](Status status, FenceRecord) { seen = status; });
  EXPECT_TRUE(seen.ok());
  EXPECT_EQ(GetSync(store, "k")->highest, 5u);
}

TEST(MemoryFenceStoreTest, RejectionsNewestFirstWithSequences) {
  MemoryFenceStore store;
  for (int i = 0; i < 5; ++i) {
    RejectionRecord record;
    record.reason = "r" + std::to_string(i);
    store.RecordRejection(record);
  }
  const auto recent = store.RecentRejections(3);
  ASSERT_EQ(recent.size(), 3u);
  EXPECT_EQ(recent[0].reason, "r4");
  EXPECT_EQ(recent[2].reason, "r2");
  EXPECT_GT(recent[0].sequence, recent[1].sequence);
  EXPECT_EQ(store.RecentRejections(100).size(), 5u);
}

TEST(MemoryFenceStoreTest, ListsFencesInKeyOrderByPage) {
  MemoryFenceStore store;
  listing_checks::ExpectPaginatedFenceListing(store);
}

TEST(MemoryFenceStoreTest, QueriesRejectionsByFilterNewestFirst) {
  MemoryFenceStore store;
  listing_checks::ExpectFilteredRejectionQuery(store);
}

}  // namespace
}  // namespace fencegate::lockstore
