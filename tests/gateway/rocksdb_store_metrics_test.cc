#include "gateway/observability/rocksdb_store_metrics.h"

#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <string>

#include <prometheus/text_serializer.h>

#include "lockstore/rocksdb/rocksdb_fence_store.h"
#include "tests/support/temp_dir.h"

namespace fencegate::gateway {
namespace {

using integration::TempDir;

class RocksDbStoreMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    lockstore::RocksDbFenceStoreOptions options;
    options.path = dir_.Join("db");
    options.block_cache_bytes = 1 << 20;
    ASSERT_TRUE(lockstore::RocksDbFenceStore::Open(options, &store_).ok());
  }

  // Advances `key` to `token` and waits until the store answers (after its synced write).
  void Advance(const std::string& key, lockstore::Token token) {
    std::promise<void> done;
    store_->Advance(key, token, 1, [&](const lockstore::Status&, const lockstore::FenceRecord&) {
      done.set_value();
    });
    done.get_future().wait();
  }

  std::string Exposition() { return prometheus::TextSerializer().Serialize(registry_.Collect()); }

  TempDir dir_;
  std::unique_ptr<lockstore::RocksDbFenceStore> store_;
  prometheus::Registry registry_;
};

TEST_F(RocksDbStoreMetricsTest, ExportsSyncLatencyAndGroupCommitSizeAsHistograms) {
  RocksDbStoreMetrics metrics(registry_, *store_);
  Advance("a", 1);
  Advance("a", 2);
  metrics.Refresh();
  std::string text = Exposition();
  EXPECT_NE(text.find("# TYPE fencegate_store_sync_duration_seconds histogram"), std::string::npos)
      << text;
  EXPECT_NE(text.find("fencegate_store_sync_duration_seconds_count 2\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("fencegate_store_sync_duration_seconds_bucket{le=\"+Inf\"} 2\n"),
            std::string::npos);
  // One advance per synced write: each waited for the one before to be answered.
  EXPECT_NE(text.find("fencegate_store_group_commit_advances_bucket{le=\"1\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fencegate_store_group_commit_advances_sum 2\n"), std::string::npos);
  EXPECT_NE(text.find("fencegate_store_sync_writes_total 2\n"), std::string::npos);

  // A refresh adds only what happened since the previous one.
  metrics.Refresh();
  Advance("b", 1);
  metrics.Refresh();
  text = Exposition();
  EXPECT_NE(text.find("fencegate_store_sync_duration_seconds_count 3\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("fencegate_store_group_commit_advances_count 3\n"), std::string::npos);
}

TEST_F(RocksDbStoreMetricsTest, AnAdvanceBelowTheFenceCostsNoSync) {
  RocksDbStoreMetrics metrics(registry_, *store_);
  Advance("a", 5);
  Advance("a", 3);
  metrics.Refresh();
  const std::string text = Exposition();
  EXPECT_NE(text.find("fencegate_store_sync_duration_seconds_count 1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("fencegate_store_group_commit_advances_count 1\n"), std::string::npos);
}

}  // namespace
}  // namespace fencegate::gateway
