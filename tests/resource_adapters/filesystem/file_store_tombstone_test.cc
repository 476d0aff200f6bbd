// A fenced DELETE leaves a tombstone with its token, so the store itself refuses an older writer
// of a deleted name (tombstone.h), in both token storages.
#include <fcntl.h>

#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "resource_adapters/filesystem/file_store.h"
#include "resource_adapters/filesystem/tombstone.h"
#include "tests/support/temp_dir.h"

namespace fencegate::adapters {
namespace {

namespace fs = std::filesystem;

class TombstoneStoreTest : public ::testing::TestWithParam<TokenStorage> {
 protected:
  void SetUp() override {
    if (GetParam() == TokenStorage::kSidecar) {
      store_ = std::make_unique<FileStore>(
          UniqueFd(open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)), true,
          TokenStorage::kSidecar);
    } else {
      // The storage the file system supports: xattrs where it has them.
      ASSERT_FALSE(FileStore::Open(root_.string(), true, store_));
    }
  }

  // The status of a whole write: 0 when committed, else the problem's status.
  unsigned Write(const ResourcePath& path, std::optional<std::uint64_t> token) {
    const WriteRequirements requirements{{}, token};
    auto begun = store_->BeginWrite(path, requirements);
    if (auto* problem = std::get_if<Problem>(&begun)) return problem->status;
    auto committed = store_->Commit(path, std::move(std::get<PendingWrite>(begun)), requirements);
    if (auto* problem = std::get_if<Problem>(&committed)) return problem->status;
    return 0;
  }

  unsigned Remove(const ResourcePath& path, std::optional<std::uint64_t> token) {
    const auto problem = store_->Remove(path, WriteRequirements{{}, token});
    return problem ? problem->status : 0;
  }

  integration::TempDir dir_;
  const fs::path root_ = dir_.path();
  std::unique_ptr<FileStore> store_;
};

TEST_P(TombstoneStoreTest, AFencedDeleteRefusesOlderWritersOfTheName) {
  const ResourcePath path{{"d"}, "report.csv"};
  ASSERT_EQ(Write(path, 5), 0u);
  ASSERT_EQ(Remove(path, 6), 0u);
  EXPECT_FALSE(fs::exists(root_ / "d/report.csv"));
  EXPECT_TRUE(fs::exists(root_ / "d" / kTombstoneDirectory / "report.csv"));

  EXPECT_EQ(Write(path, 4), 409u);
  EXPECT_EQ(Write(path, 5), 409u);
  EXPECT_FALSE(fs::exists(root_ / "d/report.csv"));
  // Still deleted for readers and for another DELETE.
  auto read = store_->OpenForRead(path);
  ASSERT_TRUE(std::holds_alternative<Problem>(read));
  EXPECT_EQ(std::get<Problem>(read).status, 404u);
  EXPECT_EQ(Remove(path, 9), 404u);

  // The deleting token itself may write again; the file then replaces the tombstone.
  EXPECT_EQ(Write(path, 6), 0u);
  EXPECT_FALSE(fs::exists(root_ / "d" / kTombstoneDirectory / "report.csv"));
  EXPECT_EQ(Write(path, 5), 409u);  // the file's own token guards it now
}

TEST_P(TombstoneStoreTest, ANewerWriterRecreatesTheFile) {
  const ResourcePath path{{}, "a"};
  ASSERT_EQ(Write(path, 1), 0u);
  ASSERT_EQ(Remove(path, 7), 0u);
  EXPECT_TRUE(fs::exists(root_ / kTombstoneDirectory / "a"));
  EXPECT_EQ(Write(path, 8), 0u);
  EXPECT_TRUE(fs::exists(root_ / "a"));
  EXPECT_FALSE(fs::exists(root_ / kTombstoneDirectory / "a"));
}

// Unfenced routes promise nothing: their deletes leave no token to keep.
TEST_P(TombstoneStoreTest, AnUnfencedDeleteLeavesNoTombstone) {
  const ResourcePath path{{}, "free"};
  ASSERT_EQ(Write(path, std::nullopt), 0u);
  ASSERT_EQ(Remove(path, std::nullopt), 0u);
  EXPECT_FALSE(fs::exists(root_ / kTombstoneDirectory / "free"));
  EXPECT_EQ(Write(path, 1), 0u);
}

INSTANTIATE_TEST_SUITE_P(DetectedAndSidecarTokenStorage, TombstoneStoreTest,
                         ::testing::Values(TokenStorage::kXattr, TokenStorage::kSidecar));

}  // namespace
}  // namespace fencegate::adapters
