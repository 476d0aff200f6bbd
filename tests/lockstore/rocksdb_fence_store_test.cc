#include "lockstore/rocksdb/rocksdb_fence_store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "lockstore/fence/fence_repair.h"
#include "lockstore/rocksdb/preextended_wal.h"
#include "lockstore/rocksdb/rocksdb_fence_store_impl.h"
#include "tests/lockstore/fence_listing_checks.h"
#include "tests/support/temp_dir.h"

namespace fencegate::lockstore {
namespace {

using integration::TempDir;

class RocksDbFenceStoreTest : public ::testing::Test {
 protected:
  RocksDbFenceStoreOptions Options() {
    RocksDbFenceStoreOptions options;
    options.path = dir_.Join("db");
    options.block_cache_bytes = 1 << 20;
    return options;
  }

  std::unique_ptr<RocksDbFenceStore> Open(RocksDbFenceStoreOptions options) {
    std::unique_ptr<RocksDbFenceStore> store;
    const Status status = RocksDbFenceStore::Open(options, &store);
    EXPECT_TRUE(status.ok()) << status.ToString();
    return store;
  }
  std::unique_ptr<RocksDbFenceStore> Open() { return Open(Options()); }

  // A fresh store with `group_commit_wait`, driven by `clients` closed loops (below) until each
  // has had `advances_each` advances acknowledged; the store's counters afterwards.
  RocksDbFenceStore::Stats StatsAfterClosedLoops(std::chrono::microseconds group_commit_wait,
                                                 int clients, int advances_each);

  static std::optional<FenceRecord> GetSync(FenceStore& store, std::string_view key) {
    std::optional<FenceRecord> out;
    store.Get(key, [&](Status status, std::optional<FenceRecord> record) {
      EXPECT_TRUE(status.ok()) << status.ToString();
      out = record;
    });
    return out;
  }

  static std::pair<Status, FenceRecord> AdvanceSync(FenceStore& store, std::string_view key,
                                                    Token token, std::int64_t now_ms = 0) {
    std::promise<std::pair<Status, FenceRecord>> done;
    store.Advance(key, token, now_ms, [&](Status status, FenceRecord record) {
      done.set_value({status, record});
    });
    return done.get_future().get();
  }

  static RejectionRecord Rejection(const std::string& request_id) {
    RejectionRecord record;
    record.at_ms = 42;
    record.route = "files";
    record.fence_key = "files:/a";
    record.method = "PUT";
    record.path = "/a";
    record.request_id = request_id;
    record.reason = "stale_token";
    record.presented = 3;
    record.has_presented = true;
    record.highest = 7;
    return record;
  }

  TempDir dir_;
};

TEST_F(RocksDbFenceStoreTest, PublicFactoryOpensAReadyStore) {
  std::unique_ptr<FenceStore> store;
  ASSERT_TRUE(OpenRocksDbFenceStore(Options(), &store).ok());
  EXPECT_TRUE(store->Ready());
  EXPECT_EQ(GetSync(*store, "never"), std::nullopt);
}

TEST_F(RocksDbFenceStoreTest, RefusesBadOptions) {
  std::unique_ptr<FenceStore> store;
  RocksDbFenceStoreOptions options = Options();
  options.path.clear();
  EXPECT_EQ(OpenRocksDbFenceStore(options, &store).code(), Status::Code::kInvalidArgument);
  options = Options();
  options.max_batch = 0;
  EXPECT_EQ(OpenRocksDbFenceStore(options, &store).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(store, nullptr);
}

TEST_F(RocksDbFenceStoreTest, AdvanceIsDurableAcrossReopen) {
  {
    auto store = Open();
    auto [status, record] = AdvanceSync(*store, "k", 9, 1234);
    ASSERT_TRUE(status.ok()) << status.ToString();
    EXPECT_EQ(record.highest, 9u);
    EXPECT_EQ(record.advanced_at_ms, 1234);
  }
  auto store = Open();
  auto record = GetSync(*store, "k");
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->highest, 9u);
  EXPECT_EQ(record->advanced_at_ms, 1234);
}

// Enough keys that, once reopened (recovery flushes the log into a table file), their index
// and filter are split into many partitions, read through a block cache far smaller than the
// table: every stored key is found with its own token and no absent key is reported present.
TEST_F(RocksDbFenceStoreTest, ReadsManyKeysFromPartitionedTables) {
  constexpr int kKeys = 50000;
  auto key = [](int i) { return "/many/" + std::to_string(i); };
  {
    auto store = Open();
    std::atomic<int> ok{0};
    std::promise<void> all_done;
    std::atomic<int> remaining{kKeys};
    for (int i = 0; i < kKeys; ++i) {
      store->Advance(key(i), Token(i + 1), i, [&](Status status, FenceRecord) {
        if (status.ok()) ++ok;
        if (--remaining == 0) all_done.set_value();
      });
    }
    all_done.get_future().wait();
    EXPECT_EQ(ok.load(), kKeys);
  }
  auto store = Open();
  for (int i = 0; i < kKeys; ++i) {
    const auto record = GetSync(*store, key(i));
    ASSERT_TRUE(record.has_value()) << key(i);
    ASSERT_EQ(record->highest, Token(i + 1)) << key(i);
    ASSERT_EQ(record->advanced_at_ms, i) << key(i);
    ASSERT_EQ(GetSync(*store, "/absent/" + std::to_string(i)), std::nullopt);
  }
}

// The memtable is a hash table on the whole key: more fences than it has buckets, keys that
// are prefixes of one another, each updated in place, all read back from the memtable with
// their own token (no reopen, so nothing has been flushed), and absent keys stay absent.
TEST_F(RocksDbFenceStoreTest, MemtableKeepsEveryFenceApartWhenBucketsAreShared) {
  constexpr int kKeys = 70000;  // more than the memtable's 65,536 buckets
  auto key = [](int i) { return "/m/" + std::to_string(i); };
  auto store = Open();
  for (Token round : {Token(1), Token(2)}) {
    std::promise<void> all_done;
    std::atomic<int> remaining{kKeys};
    for (int i = 0; i < kKeys; ++i) {
      // Round 2 raises every other fence, in place.
      const Token token = round == 1 || i % 2 == 0 ? Token(i) + round : Token(i) + 1;
      store->Advance(key(i), token, i, [&](Status status, FenceRecord) {
        EXPECT_TRUE(status.ok()) << status.ToString();
        if (--remaining == 0) all_done.set_value();
      });
    }
    all_done.get_future().wait();
  }
  for (int i = 0; i < kKeys; ++i) {
    const auto record = GetSync(*store, key(i));
    ASSERT_TRUE(record.has_value()) << key(i);
    ASSERT_EQ(record->highest, Token(i) + (i % 2 == 0 ? 2 : 1)) << key(i);
  }
  EXPECT_EQ(GetSync(*store, "/m/"), std::nullopt);
  EXPECT_EQ(GetSync(*store, "/m/700000"), std::nullopt);
}

// What bench/tools/fence_fill does to a bulk-loaded store: the compacted fences read back with
// their own tokens after a reopen, absent keys stay absent, and the store still advances.
TEST_F(RocksDbFenceStoreTest, CompactedFencesReadBackAndAdvance) {
  constexpr int kKeys = 5000;
  auto key = [](int i) { return "/compact/" + std::to_string(i); };
  {
    auto store = Open();
    for (int i = 0; i < kKeys; i += 500) {
      std::promise<void> batch_done;
      std::atomic<int> remaining{500};
      for (int j = i; j < i + 500; ++j) {
        store->Advance(key(j), Token(j + 1), j, [&](Status status, FenceRecord) {
          EXPECT_TRUE(status.ok()) << status.ToString();
          if (--remaining == 0) batch_done.set_value();
        });
      }
      batch_done.get_future().wait();
    }
    const Status compacted = store->CompactFences();
    ASSERT_TRUE(compacted.ok()) << compacted.ToString();
    EXPECT_EQ(GetSync(*store, key(7))->highest, 8u);
  }
  auto store = Open();
  for (int i = 0; i < kKeys; ++i) {
    const auto record = GetSync(*store, key(i));
    ASSERT_TRUE(record.has_value()) << key(i);
    ASSERT_EQ(record->highest, Token(i + 1)) << key(i);
    ASSERT_EQ(GetSync(*store, "/absent/" + std::to_string(i)), std::nullopt);
  }
  EXPECT_EQ(AdvanceSync(*store, key(3), 100).second.highest, 100u);
  EXPECT_EQ(AdvanceSync(*store, key(4), 2).second.highest, 5u) << "never lowered";
  store->Close();
  EXPECT_EQ(store->CompactFences().code(), Status::Code::kUnavailable);
}

TEST_F(RocksDbFenceStoreTest, NeverLowers) {
  auto store = Open();
  ASSERT_TRUE(AdvanceSync(*store, "k", 9, 1).first.ok());
  auto [status, record] = AdvanceSync(*store, "k", 4, 2);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(record.highest, 9u);
  EXPECT_EQ(record.advanced_at_ms, 1) << "a refused advance must not touch the record";
  store.reset();
  store = Open();
  EXPECT_EQ(AdvanceSync(*store, "k", 8).second.highest, 9u);
  EXPECT_EQ(GetSync(*store, "k")->highest, 9u);
}

// The writer remembers the fences it wrote; a repair (which lowers a fence) must update what it
// remembers, or the next advance would be compared with the value from before the repair.
TEST_F(RocksDbFenceStoreTest, AnAdvanceAfterARepairStartsFromTheRepairedValue) {
  auto store = Open();
  ASSERT_TRUE(AdvanceSync(*store, "k", 100, 1).first.ok());
  FenceRepairRecord repair;
  repair.at_ms = 2;
  repair.fence_key = "k";
  repair.new_highest = 10;
  repair.reason = "test";
  std::promise<Status> repaired;
  store->Repair(repair, [&](Status status, FenceRepairRecord) { repaired.set_value(status); });
  ASSERT_TRUE(repaired.get_future().get().ok());
  auto [status, record] = AdvanceSync(*store, "k", 50, 3);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(record.highest, 50u);
  EXPECT_EQ(record.advanced_at_ms, 3);
  EXPECT_EQ(AdvanceSync(*store, "k", 40, 4).second.highest, 50u);
  store.reset();
  store = Open();
  EXPECT_EQ(GetSync(*store, "k")->highest, 50u);
}

TEST_F(RocksDbFenceStoreTest, GroupCommitsConcurrentAdvances) {
  auto store = Open();
  constexpr int kThreads = 64;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      if (AdvanceSync(*store, "key" + std::to_string(i), 100 + i).first.ok()) ++ok;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(ok.load(), kThreads);
  const auto stats = store->stats();
  EXPECT_EQ(stats.advances, std::uint64_t{kThreads});
  EXPECT_GE(stats.sync_writes, 1u);
  EXPECT_LT(stats.sync_writes, std::uint64_t{kThreads}) << "every advance paid its own fsync";
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_EQ(GetSync(*store, "key" + std::to_string(i))->highest, Token(100 + i));
  }
}

// Clients that each wait for their advance before sending the next, as gateway sessions do.
void AdvanceInClosedLoops(FenceStore& store, int clients, int advances_each,
                          std::atomic<int>* acknowledged) {
  std::vector<std::thread> threads;
  for (int client = 0; client < clients; ++client) {
    threads.emplace_back([&store, client, advances_each, acknowledged] {
      const std::string key = "client" + std::to_string(client);
      for (int token = 1; token <= advances_each; ++token) {
        std::promise<Status> done;
        store.Advance(key, token, 0, [&](Status status, FenceRecord) { done.set_value(status); });
        if (done.get_future().get().ok()) ++*acknowledged;
      }
    });
  }
  for (auto& thread : threads) thread.join();
}

RocksDbFenceStore::Stats RocksDbFenceStoreTest::StatsAfterClosedLoops(
    std::chrono::microseconds group_commit_wait, int clients, int advances_each) {
  RocksDbFenceStoreOptions options = Options();
  options.group_commit_wait = group_commit_wait;
  auto store = Open(options);
  std::atomic<int> acknowledged{0};
  AdvanceInClosedLoops(*store, clients, advances_each, &acknowledged);
  EXPECT_EQ(acknowledged.load(), clients * advances_each);
  return store->stats();
}

TEST_F(RocksDbFenceStoreTest, GatheringUnderConcurrencyLosesNoAdvance) {
  RocksDbFenceStoreOptions options = Options();
  options.group_commit_wait = std::chrono::milliseconds(100);  // capped by the fsync time
  auto store = Open(options);
  std::atomic<int> acknowledged{0};
  AdvanceInClosedLoops(*store, 16, 40, &acknowledged);
  EXPECT_EQ(acknowledged.load(), 16 * 40);
  const auto stats = store->stats();
  EXPECT_EQ(stats.advances, 16u * 40u);
  EXPECT_LT(stats.sync_writes, 16u * 40u) << "every advance paid its own fsync";
  store.reset();
  store = Open(options);
  for (int client = 0; client < 16; ++client) {
    EXPECT_EQ(GetSync(*store, "client" + std::to_string(client))->highest, 40u);
  }
}

TEST_F(RocksDbFenceStoreTest, ALoneClientNeverWaitsForCompany) {
  const auto stats = StatsAfterClosedLoops(std::chrono::milliseconds(100), 1, 30);
  EXPECT_EQ(stats.sync_writes, 30u);
  EXPECT_EQ(stats.gathers, 0u);
}

// Two clients are always both in the round: a probe for a third never pays off, so probes back
// off exponentially instead of delaying every other round.
TEST_F(RocksDbFenceStoreTest, ProbesForLargerRoundsBackOffWhenNoMoreClientsCome) {
  const auto stats = StatsAfterClosedLoops(std::chrono::milliseconds(100), 2, 300);
  // At most one probe per doubling of the interval over at most 600 rounds (1, 2, 4, ... 512).
  EXPECT_LE(stats.probes, 10u) << stats.sync_writes << " synced writes";
}

TEST_F(RocksDbFenceStoreTest, ZeroWaitNeverGathers) {
  EXPECT_EQ(StatsAfterClosedLoops(std::chrono::microseconds(0), 16, 20).gathers, 0u);
}

TEST_F(RocksDbFenceStoreTest, FoldsAdvancesOfOneKeyToTheHighest) {
  auto store = Open();
  // Queue a burst without waiting so the writer sees them together.
  std::vector<std::promise<FenceRecord>> results(50);
  for (int i = 0; i < 50; ++i) {
    store->Advance("k", 1 + (i * 37) % 50, i, [&, i](Status status, FenceRecord record) {
      EXPECT_TRUE(status.ok());
      results[i].set_value(record);
    });
  }
  Token previous = 0;
  for (int i = 0; i < 50; ++i) {
    const Token highest = results[i].get_future().get().highest;
    EXPECT_GE(highest, Token(1 + (i * 37) % 50)) << "acknowledged below the requested token";
    EXPECT_GE(highest, previous) << "acknowledgements went backwards";
    previous = highest;
  }
  EXPECT_EQ(GetSync(*store, "k")->highest, 50u);
  EXPECT_LT(store->stats().sync_writes, 50u);
}

TEST_F(RocksDbFenceStoreTest, ClosedStoreRefuses) {
  auto store = Open();
  ASSERT_TRUE(AdvanceSync(*store, "k", 3).first.ok());
  store->Close();
  EXPECT_FALSE(store->Ready());
  auto [status, record] = AdvanceSync(*store, "k", 4);
  EXPECT_EQ(status.code(), Status::Code::kUnavailable);
  Status read_status;
  store->Get("k", [&](Status s, std::optional<FenceRecord>) { read_status = s; });
  EXPECT_EQ(read_status.code(), Status::Code::kUnavailable);
  EXPECT_EQ(store->Flush().code(), Status::Code::kUnavailable);
  EXPECT_TRUE(store->RecentRejections(10).empty());
  store->Close();  // idempotent
}

TEST_F(RocksDbFenceStoreTest, RejectionsNewestFirstAcrossReopen) {
  {
    auto store = Open();
    for (int i = 0; i < 5; ++i) store->RecordRejection(Rejection("r" + std::to_string(i)));
    ASSERT_TRUE(store->Flush().ok());
    EXPECT_EQ(store->stats().rejections_written, 5u);
  }
  auto store = Open();
  store->RecordRejection(Rejection("r5"));
  ASSERT_TRUE(store->Flush().ok());
  const auto recent = store->RecentRejections(4);
  ASSERT_EQ(recent.size(), 4u);
  EXPECT_EQ(recent[0].request_id, "r5");
  EXPECT_EQ(recent[3].request_id, "r2");
  for (std::size_t i = 1; i < recent.size(); ++i) {
    EXPECT_EQ(recent[i - 1].sequence, recent[i].sequence + 1) << "sequences restarted on reopen";
  }
  EXPECT_EQ(recent[0].route, "files");
  EXPECT_EQ(recent[0].reason, "stale_token");
  EXPECT_EQ(recent[0].presented, 3u);
  EXPECT_TRUE(recent[0].has_presented);
  EXPECT_EQ(recent[0].highest, 7u);
  EXPECT_EQ(recent[0].at_ms, 42);
}

TEST_F(RocksDbFenceStoreTest, RejectionsBeyondTheQueueAreDroppedAndCounted) {
  RocksDbFenceStoreOptions options = Options();
  options.rejection_queue = 8;
  options.rejection_batch = 3;
  auto store = Open(options);
  // The writer is held inside an advance's callback while refusals arrive: 8 of them wait,
  // the rest find the queue full.
  std::promise<void> entered;
  std::promise<void> release;
  store->Advance("k", 1, 0, [&](Status, FenceRecord) {
    entered.set_value();
    release.get_future().wait();
  });
  entered.get_future().wait();
  for (int i = 0; i < 13; ++i) store->RecordRejection(Rejection("r" + std::to_string(i)));
  EXPECT_EQ(store->stats().rejections_dropped, 5u);
  // An advance queued behind a full rejection queue is written in the next round, before all
  // but one batch of the records.
  std::uint64_t written_before_advance = 0;
  store->Advance("k2", 1, 0, [&](Status status, FenceRecord) {
    EXPECT_TRUE(status.ok());
    written_before_advance = store->stats().rejections_written;
  });
  release.set_value();
  ASSERT_TRUE(store->Flush().ok());
  EXPECT_LE(written_before_advance, options.rejection_batch);
  EXPECT_EQ(store->stats().rejections_written, 8u);
  EXPECT_EQ(store->stats().rejections_dropped, 5u);
  const auto kept = store->RecentRejections(100);
  ASSERT_EQ(kept.size(), 8u);
  EXPECT_EQ(kept[0].request_id, "r7");
  EXPECT_EQ(kept[7].request_id, "r0");
}

TEST_F(RocksDbFenceStoreTest, RejectionRetentionKeepsTheNewest) {
  RocksDbFenceStoreOptions options = Options();
  options.rejection_retention = 3;
  {
    auto store = Open(options);
    for (int i = 0; i < 10; ++i) store->RecordRejection(Rejection("r" + std::to_string(i)));
    ASSERT_TRUE(store->Flush().ok());
    const auto kept = store->RecentRejections(100);
    ASSERT_EQ(kept.size(), 3u);
    EXPECT_EQ(kept[0].request_id, "r9");
    EXPECT_EQ(kept[2].request_id, "r7");
  }
  // A smaller retention on the next run trims what the last run kept.
  options.rejection_retention = 1;
  auto store = Open(options);
  const auto kept = store->RecentRejections(100);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].request_id, "r9");
}

// Kills a writer mid-flight: every advance it saw acknowledged must have survived.
TEST_F(RocksDbFenceStoreTest, AcknowledgedAdvancesSurviveKill) {
  const std::string db_path = Options().path;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    const std::string fd = std::to_string(fds[1]);
    execl(LOCKSTORE_CRASH_CHILD, LOCKSTORE_CRASH_CHILD, db_path.c_str(), fd.c_str(), nullptr);
    _exit(127);
  }
  close(fds[1]);

  std::map<std::uint64_t, Token> acknowledged;  // key index -> highest acknowledged token
  std::size_t acks = 0;
  auto read_ack = [&] {
    std::uint64_t ack[2];
    if (read(fds[0], ack, sizeof(ack)) != sizeof(ack)) return false;
    acknowledged[ack[0]] = std::max(acknowledged[ack[0]], ack[1]);
    ++acks;
    return true;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (acks < 300 && std::chrono::steady_clock::now() < deadline && read_ack()) {
  }
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int wait_status = 0;
  ASSERT_EQ(waitpid(child, &wait_status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(wait_status)) << "the writer ended before it was killed";
  while (read_ack()) {  // acknowledgements written before the kill
  }
  close(fds[0]);
  ASSERT_GE(acks, 300u) << "the writer was too slow to test anything";
  // The killed writer's log still reaches past its last record with zeros (preextended_wal.h):
  // the reopen below replays through them.
  bool extended_log = false;
  for (const auto& entry : std::filesystem::directory_iterator(db_path)) {
    if (entry.path().extension() != ".log") continue;
    extended_log |= entry.file_size() > 0 && entry.file_size() % kWalExtensionBytes == 0;
  }
  EXPECT_TRUE(extended_log);

  auto store = Open();
  for (const auto& [key, token] : acknowledged) {
    auto record = GetSync(*store, "key" + std::to_string(key));
    ASSERT_TRUE(record.has_value()) << "key" << key << " lost";
    EXPECT_GE(record->highest, token) << "key" << key << " lost an acknowledged advance";
  }
}

// The write-ahead log of a store closed cleanly, left as kill -9 leaves an extended one
// (preextended_wal.h): zeros after the records up to a multiple of the extension. With `torn`,
// a last record whose write stopped at a sector boundary precedes the zeros: its header and
// first bytes made it to the disk, the rest did not.
std::string LeaveLogExtended(const std::string& store_path, bool torn) {
  std::string path;
  for (const auto& entry : std::filesystem::directory_iterator(store_path)) {
    if (entry.path().extension() == ".log") path = entry.path().string();
  }
  std::string log = integration::ReadWholeFile(path);
  if (torn) {
    constexpr std::size_t kSector = 512;
    const std::size_t boundary = (log.size() + 7) / kSector * kSector + kSector;
    const std::size_t length = boundary - log.size() - 7 + 100;  // 100 bytes never written
    EXPECT_LE(log.size() % 32768 + 7 + length, 32768u) << "the record would cross a block";
    log += std::string("\x12\x34\x56\x78", 4);                                     // checksum
    log += {static_cast<char>(length & 0xFF), static_cast<char>(length >> 8), 1};  // full record
    log += std::string(boundary - log.size(), 'p');
  }
  log.resize((log.size() / kWalExtensionBytes + 1) * kWalExtensionBytes, '\0');
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(log.data(), log.size());
  return path;
}

TEST_F(RocksDbFenceStoreTest, AWriteCutShortBeforeTheLogsZerosIsDroppedAtOpen) {
  {
    auto store = Open();
    for (Token token = 1; token <= 5; ++token)
      ASSERT_TRUE(AdvanceSync(*store, "k", token).first.ok());
  }
  LeaveLogExtended(Options().path, /*torn=*/true);
  std::vector<std::string> said;
  RocksDbFenceStoreOptions options = Options();
  options.log = [&](LogSeverity, std::string_view line) { said.emplace_back(line); };
  auto store = Open(options);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(GetSync(*store, "k")->highest, 5u);
  ASSERT_FALSE(said.empty());
  EXPECT_NE(said[0].find("dropped a write cut short"), std::string::npos) << said[0];
}

TEST_F(RocksDbFenceStoreTest, ALogLeftExtendedReplaysToItsLastRecord) {
  {
    auto store = Open();
    for (Token token = 1; token <= 5; ++token)
      ASSERT_TRUE(AdvanceSync(*store, "k", token).first.ok());
  }
  const std::string log = LeaveLogExtended(Options().path, /*torn=*/false);
  ASSERT_EQ(std::filesystem::file_size(log) % kWalExtensionBytes, 0u);
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(GetSync(*store, "k")->highest, 5u);
}

TEST_F(RocksDbFenceStoreTest, DamageBeforeALogsZerosStillRefusesTheOpen) {
  {
    auto store = Open();
    for (Token token = 1; token <= 5; ++token)
      ASSERT_TRUE(AdvanceSync(*store, "k", token).first.ok());
  }
  const std::string path = LeaveLogExtended(Options().path, /*torn=*/true);
  // A flipped byte in the first record: damage, not a torn end, even with one after it.
  std::fstream log(path, std::ios::binary | std::ios::in | std::ios::out);
  log.seekp(10);
  log.put('\xAA');
  log.close();
  std::unique_ptr<RocksDbFenceStore> store;
  const Status status = RocksDbFenceStore::Open(Options(), &store);
  EXPECT_EQ(status.code(), Status::Code::kCorruption) << status.ToString();
}

TEST_F(RocksDbFenceStoreTest, RouteBindingsAndFencePrefixesSurviveReopen) {
  {
    auto store = Open();
    std::map<std::string, std::string> bindings;
    ASSERT_TRUE(store->ReadRouteBindings(&bindings).ok());
    EXPECT_TRUE(bindings.empty());
    ASSERT_TRUE(store
                    ->WriteRouteBindings(
                        {{"files", "fence_key=files:{path}"}, {"api", "fence_key=api:{path}"}})
                    .ok());
    ASSERT_TRUE(store->WriteRouteBindings({{"files", "fence_key=f:{path}"}}).ok());
    std::promise<Status> advanced;
    store->Advance("files:/a", 5, 1, [&](Status s, FenceRecord) { advanced.set_value(s); });
    ASSERT_TRUE(advanced.get_future().get().ok());
  }
  auto store = Open();
  std::map<std::string, std::string> bindings;
  ASSERT_TRUE(store->ReadRouteBindings(&bindings).ok());
  EXPECT_EQ(bindings, (std::map<std::string, std::string>{{"api", "fence_key=api:{path}"},
                                                          {"files", "fence_key=f:{path}"}}));
  bool found = false;
  ASSERT_TRUE(store->HasFenceWithPrefix("files:", &found).ok());
  EXPECT_TRUE(found);
  ASSERT_TRUE(store->HasFenceWithPrefix("api:", &found).ok());
  EXPECT_FALSE(found);
  ASSERT_TRUE(store->HasFenceWithPrefix("", &found).ok());
  EXPECT_TRUE(found);
  // Route bindings live beside the fences, never among them.
  ASSERT_TRUE(store->HasFenceWithPrefix("fencegate.", &found).ok());
  EXPECT_FALSE(found);
}

TEST_F(RocksDbFenceStoreTest, ListsFencesInKeyOrderByPage) {
  auto store = Open();
  listing_checks::ExpectPaginatedFenceListing(*store);
  // From table files after a reopen too, and with advances still in the memtable.
  store.reset();
  store = Open();
  AdvanceSync(*store, "files:/aa", 4);
  FencePage page;
  ASSERT_TRUE(store->ListFences("files:", "files:/a", 2, &page).ok());
  ASSERT_EQ(page.fences.size(), 2u);
  EXPECT_EQ(page.fences[0].fence_key, "files:/aa");
  EXPECT_EQ(page.fences[0].record.highest, 4u);
  EXPECT_EQ(page.fences[1].fence_key, "files:/b");
  EXPECT_TRUE(page.more);
}

TEST_F(RocksDbFenceStoreTest, QueriesRejectionsByFilterNewestFirst) {
  auto store = Open();
  listing_checks::ExpectFilteredRejectionQuery(*store);
  // The caller fields survive a reopen (the trail is on disk).
  store.reset();
  store = Open();
  RejectionQuery query;
  query.principal = "bob";
  const RejectionPage page = store->QueryRejections(query);
  ASSERT_EQ(page.records.size(), 1u);
  EXPECT_EQ(page.records[0].client, "10.0.0.1");
  EXPECT_EQ(page.records[0].request_id, "req-300");
}

}  // namespace
}  // namespace fencegate::lockstore
