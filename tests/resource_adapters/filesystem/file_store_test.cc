#include "resource_adapters/filesystem/file_store.h"

#include <fcntl.h>

#include <algorithm>
#include <barrier>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace fencegate::adapters {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The sidecar token storage, used where the filesystem has no user xattrs. The test
// filesystem has them, so the store is built in sidecar mode explicitly.
class SidecarFileStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::make_unique<FileStore>(
        UniqueFd(open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)), true,
        TokenStorage::kSidecar);
  }
  OrProblem<CommittedWrite> Write(const ResourcePath& path, const std::string& content,
                                  std::optional<std::uint64_t> token) {
    WriteRequirements requirements{{}, token};
    auto begun = store_->BeginWrite(path, requirements);
    if (auto* problem = std::get_if<Problem>(&begun)) return *problem;
    PendingWrite write = std::move(std::get<PendingWrite>(begun));
    EXPECT_FALSE(FileStore::Append(write, content.data(), content.size()));
    return store_->Commit(path, std::move(write), requirements);
  }

  integration::TempDir dir_;
  const fs::path root_ = dir_.path();
  std::unique_ptr<FileStore> store_;
};

TEST_F(SidecarFileStoreTest, KeepsTheTokenInASidecarFile) {
  ResourcePath path{{"dir"}, "file.txt"};
  auto written = Write(path, "content", 5);
  ASSERT_TRUE(std::holds_alternative<CommittedWrite>(written));
  EXPECT_TRUE(std::get<CommittedWrite>(written).created);
  EXPECT_EQ(ReadFile(root_ / "dir/file.txt"), "content");
  EXPECT_EQ(ReadFile(root_ / "dir/.fencegate-meta.file.txt"), "5");

  auto opened = store_->OpenForRead(path);
  ASSERT_TRUE(std::holds_alternative<OpenedFile>(opened));
  EXPECT_EQ(std::get<OpenedFile>(opened).version.token, 5u);
  EXPECT_EQ(std::get<OpenedFile>(opened).version.etag,
            std::get<CommittedWrite>(written).version.etag);
}

TEST_F(SidecarFileStoreTest, RefusesAStaleTokenAndKeepsTheFile) {
  ResourcePath path{{}, "f"};
  ASSERT_TRUE(std::holds_alternative<CommittedWrite>(Write(path, "new", 8)));
  auto stale = Write(path, "old", 7);
  ASSERT_TRUE(std::holds_alternative<Problem>(stale));
  EXPECT_EQ(std::get<Problem>(stale).status, 409u);
  EXPECT_EQ(ReadFile(root_ / "f"), "new");
  EXPECT_EQ(ReadFile(root_ / ".fencegate-meta.f"), "8");
}

TEST_F(SidecarFileStoreTest, StaleCommitRaceIsCaughtUnderTheLock) {
  // Both writers pass the early check; the newer one commits first.
  ResourcePath path{{}, "race"};
  WriteRequirements older{{}, 3};
  WriteRequirements newer{{}, 4};
  auto older_write = store_->BeginWrite(path, older);
  auto newer_write = store_->BeginWrite(path, newer);
  ASSERT_TRUE(std::holds_alternative<PendingWrite>(older_write));
  ASSERT_TRUE(std::holds_alternative<PendingWrite>(newer_write));
  ASSERT_TRUE(std::holds_alternative<CommittedWrite>(
      store_->Commit(path, std::move(std::get<PendingWrite>(newer_write)), newer)));
  auto refused = store_->Commit(path, std::move(std::get<PendingWrite>(older_write)), older);
  ASSERT_TRUE(std::holds_alternative<Problem>(refused));
  EXPECT_EQ(std::get<Problem>(refused).type, "stale-token-at-backend");
  // Neither temp file is left behind.
  int entries = 0;
  for (const auto& entry : fs::directory_iterator(root_)) {
    EXPECT_FALSE(entry.path().filename().string().starts_with(".fencegate-tmp-"));
    ++entries;
  }
  EXPECT_EQ(entries, 3);  // the file, its sidecar and the directory's lock file
}

TEST_F(SidecarFileStoreTest, RemoveDeletesFileAndSidecar) {
  ResourcePath path{{}, "gone"};
  ASSERT_TRUE(std::holds_alternative<CommittedWrite>(Write(path, "x", 2)));
  EXPECT_FALSE(store_->Remove(path, WriteRequirements{{}, 2}).has_value());
  EXPECT_FALSE(fs::exists(root_ / "gone"));
  EXPECT_FALSE(fs::exists(root_ / ".fencegate-meta.gone"));
  auto again = store_->Remove(path, WriteRequirements{{}, 2});
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->status, 404u);
}

// Two FileStores on one root stand for two gateway processes sharing a directory: each has its
// own path lock table, so only the directory's flock orders their commits. In every round four
// writers (two per store) pass the early check, then commit at once with distinct tokens; the
// file must end with the greatest token that committed, else an older write was renamed over a
// newer one.
TEST(SharedRootFileStoreTest, RacingCommitsFromTwoStoresNeverLeaveAnOlderToken) {
  const integration::TempDir dir;
  const fs::path root = dir.path();
  auto open_store = [&](TokenStorage storage) {
    return std::make_unique<FileStore>(
        UniqueFd(open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)), false, storage);
  };
  for (TokenStorage storage : {TokenStorage::kXattr, TokenStorage::kSidecar}) {
    std::unique_ptr<FileStore> stores[2] = {open_store(storage), open_store(storage)};
    constexpr int kWriters = 4;
    constexpr int kRounds = 300;
    std::mt19937 random(7);
    for (int round = 0; round < kRounds; ++round) {
      const ResourcePath path{{}, "f" + std::to_string(round)};
      std::vector<std::uint64_t> tokens{1, 2, 3, 4};
      std::shuffle(tokens.begin(), tokens.end(), random);
      std::barrier start(kWriters);
      // One byte per writer: std::vector<bool> packs the flags into one word, and writers setting
      // their own flag at once would race on it.
      std::vector<char> committed(kWriters, 0);
      std::vector<std::thread> writers;
      for (int w = 0; w < kWriters; ++w) {
        writers.emplace_back([&, w] {
          FileStore& store = *stores[w % 2];
          const WriteRequirements requirements{{}, tokens[w]};
          auto begun = store.BeginWrite(path, requirements);
          start.arrive_and_wait();
          if (auto* write = std::get_if<PendingWrite>(&begun)) {
            committed[w] = std::holds_alternative<CommittedWrite>(
                store.Commit(path, std::move(*write), requirements));
          }
        });
      }
      for (auto& writer : writers) writer.join();
      std::uint64_t greatest = 0;
      for (int w = 0; w < kWriters; ++w) {
        if (committed[w]) greatest = std::max(greatest, tokens[w]);
      }
      ASSERT_GT(greatest, 0u);
      auto opened = stores[0]->OpenForRead(path);
      ASSERT_TRUE(std::holds_alternative<OpenedFile>(opened));
      ASSERT_EQ(std::get<OpenedFile>(opened).version.token, greatest)
          << "round " << round << (storage == TokenStorage::kXattr ? " (xattr)" : " (sidecar)");
    }
  }
}

TEST(ProblemFromErrorTest, MapsStorageErrorsToStatuses) {
  EXPECT_EQ(ProblemFromError(std::make_error_code(std::errc::no_space_on_device), "w").status,
            507u);
  EXPECT_EQ(ProblemFromError(std::make_error_code(std::errc::read_only_file_system), "w").status,
            503u);
  EXPECT_EQ(
      ProblemFromError(std::make_error_code(std::errc::too_many_symbolic_link_levels), "w").type,
      "path-escapes-root");
  EXPECT_EQ(ProblemFromError(std::make_error_code(std::errc::io_error), "w").status, 500u);
}

}  // namespace
}  // namespace fencegate::adapters
