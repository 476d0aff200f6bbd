#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <variant>
#include <vector>

#include "lockstore/fence/fence_store.h"
#include "lockstore/fence/rejection_queue.h"
#include "lockstore/locks/lock_persistence.h"
#include "lockstore/rocksdb/bucket_counts.h"
#include "lockstore/rocksdb/rocksdb_fence_recovery.h"
#include "lockstore/rocksdb/rocksdb_fence_store.h"

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
class Status;
class WriteBatch;
struct WriteOptions;
}  // namespace rocksdb

namespace fencegate::lockstore {

// The RocksDB fence store. Public callers use OpenRocksDbFenceStore(); this concrete type is
// for the process that wants its counters or an explicit Close() (tests, shutdown).
//
// Layout: column family "fences" maps key -> EncodeFenceValue(); "rejections" maps the
// big-endian sequence -> EncodeRejectionValue(); the default column family holds metadata.
// The lock table's state lives in the same database (so one synced batch orders it with the
// fences): "locks" maps lock name -> EncodeLockValue(), "lock_audit" maps the big-endian
// sequence -> EncodeLockAuditValue() (forced releases; kept, never trimmed); "fence_repairs"
// maps the big-endian sequence -> EncodeFenceRepairValue() (operator repairs; never trimmed).
//
// Threads: Get(), ReadLocal() and RecentRejections() read on the caller's thread (reads never
// fsync, so they are cheap enough for that; RecentRejections() first waits for the writes queued
// before it). Advance() and RecordRejection() go to one writer thread, which
// folds everything queued into one synced WriteBatch per round (group commit), so the fsync
// cost is shared by all advances that arrived while the previous one was in progress.
// Refused writes' audit records wait in their own bounded queue (RejectionQueue), not behind or
// in front of advances: the writer writes at most one batch of them after each round, and a
// record refused by a full queue is dropped and counted.
class RocksDbFenceStore final : public FenceStore, public LockPersistence {
 public:
  // Counters for operators and tests; monotonic since open.
  struct Stats {
    std::uint64_t advances = 0;       // Advance() calls accepted
    std::uint64_t sync_writes = 0;    // synced write batches (fsyncs) issued for advances
    std::uint64_t gathers = 0;        // rounds delayed to gather more advances (group_commit_wait)
    std::uint64_t probes = 0;         // gathers that asked for more than the previous round carried
    std::uint64_t failed_writes = 0;  // synced write batches that failed
    std::uint64_t rejections_written = 0;
    // Audit records not written: the rejection queue was full (a flood of refusals), or the
    // write that carried them failed or came while RocksDB was throttling writes.
    std::uint64_t rejections_dropped = 0;
    // Seconds each synced write (of advances or lock records) took, failed ones included.
    static constexpr std::array<double, 14> kSyncSecondsBounds = {
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
    BucketCounts<kSyncSecondsBounds.size()> sync_seconds;
    // Advances that shared one synced write (the group commit), written or refused by the disk.
    static constexpr std::array<double, 11> kGroupCommitBounds = {1,  2,   4,   8,   16,  32,
                                                                  64, 128, 256, 512, 1024};
    BucketCounts<kGroupCommitBounds.size()> group_commit_advances;
  };

  static Status Open(const RocksDbFenceStoreOptions& options,
                     std::unique_ptr<RocksDbFenceStore>* store);
  ~RocksDbFenceStore() override;

  void Get(std::string_view key, GetCallback callback) override;
  std::optional<LocalRead> ReadLocal(std::string_view key) override;
  // Once closed, calls back at once (on the caller's thread) with Unavailable.
  void Advance(std::string_view key, Token token, std::int64_t now_ms,
               AdvanceCallback callback) override;
  void RecordRejection(RejectionRecord record) override;
  std::vector<RejectionRecord> RecentRejections(std::size_t limit) override;
  // rocksdb_fence_listing.cc.
  RejectionPage QueryRejections(const RejectionQuery& query) override;
  Status ListFences(std::string_view prefix, std::string_view after, std::size_t limit,
                    FencePage* page) override;
  void Repair(FenceRepairRecord record, RepairCallback callback) override;
  std::vector<FenceRepairRecord> RecentRepairs(std::size_t limit) override;
  Status Flush() override;
  bool Ready() const override;
  // rocksdb_route_bindings.cc: in the metadata (default) family, written synced.
  Status ReadRouteBindings(std::map<std::string, std::string>* out) override;
  Status WriteRouteBindings(const std::map<std::string, std::string>& bindings) override;
  Status HasFenceWithPrefix(std::string_view prefix, bool* found) override;

  // LockPersistence (lock_rocksdb.cc). Lock writes go through the same writer thread.
  Status LoadLocks(std::vector<LockRecord>* out) override;
  Status ReadLock(std::string_view name, std::optional<LockRecord>* out) override;
  void WriteLock(LockWrite write, WriteCallback callback) override;
  std::vector<LockAuditRecord> RecentLockAudit(std::size_t limit) override;

  // Drains the writer, syncs the WAL and closes the database. Idempotent; the destructor calls it.
  void Close();
  // Flushes the fences family and compacts it down to one sorted level, the shape RocksDB's
  // background compactions give a store that has run for a while. Blocks; for tools that build
  // a store to be measured (bench/tools/fence_fill), not for the gateway.
  Status CompactFences();
  Stats stats() const;

  struct FloorResult {
    std::uint64_t examined = 0;  // stored fences under the prefix
    std::uint64_t raised = 0;    // of those, the ones that stood below the floor
  };
  // `fencegate store floor` (rocksdb_fence_floor.cc): every fence under `prefix` ("" for all),
  // stored or not, stands at least at `floor` from now on, durably. Blocks; only for a store no
  // gateway serves (nothing else may advance it meanwhile).
  Status RaiseFloor(std::string_view prefix, Token floor, std::int64_t now_ms, FloorResult* result);

 private:
  struct AdvanceOp {
    std::string key;
    Token token = 0;
    std::int64_t now_ms = 0;
    AdvanceCallback callback;
  };
  struct LockOp {
    LockWrite write;
    WriteCallback callback;
  };
  struct RepairOp {
    FenceRepairRecord record;
    RepairCallback callback;
  };
  using WriteOp = std::variant<AdvanceOp, LockOp, RepairOp>;

  RocksDbFenceStore(const RocksDbFenceStoreOptions& options, rocksdb::DB* db,
                    std::vector<rocksdb::ColumnFamilyHandle*> handles,
                    std::uint64_t next_rejection_sequence, std::uint64_t next_audit_sequence,
                    std::uint64_t next_repair_sequence);

  // Waits until the rejections recorded before the call are written (no fsync is involved), so
  // that a refusal the client has already seen is in the trail a reader sees.
  void WaitForRecordedRejections();
  // Moves `op` into the queue; leaves it untouched and returns false once closing.
  [[nodiscard]] bool Enqueue(WriteOp& op);
  void WriterLoop();
  // Called by the writer with mu_ held and operations in queue_: gathers a group commit and
  // moves the round's operations (at most max_batch advances) into `round`.
  void TakeRound(std::unique_lock<std::mutex>& lock, std::vector<WriteOp>& round);
  // Called by the writer with mu_ held and work queued: see group_commit_wait.
  void GatherGroupCommit(std::unique_lock<std::mutex>& lock);
  void CommitAdvances(std::vector<AdvanceOp*>& advances);
  void WriteRejections(std::span<RejectionRecord> rejections);
  void CommitLocks(std::vector<LockOp*>& locks);
  void CommitRepair(RepairOp& repair);
  // Writes `batch` (leaving RocksDB's error state first if a write failed before) and tracks
  // the store's health from the outcome.
  rocksdb::Status Write(const rocksdb::WriteOptions& options, rocksdb::WriteBatch* batch);
  // Called by the writer when idle while unhealthy: recovers once the disk takes writes again.
  void TryResume();
  void SetHealthy(bool healthy, const rocksdb::Status& cause);

  const RocksDbFenceStoreOptions options_;

  // Floors laid by RaiseFloor(), this run's or an earlier one's: a key the store has no record
  // of stands at the highest floor over it. Guarded like the database pointer (db_mu_).
  std::vector<FenceFloor> floors_;
  std::optional<FenceRecord> FloorFor(std::string_view key) const;
  // The floor over all keys (--all) also raises the built-in locks' tokens: a grant then hands
  // out a token above it, which the lock's fences admit (lock_rocksdb.cc).
  Token LockTokenFloor() const;

  // Guards the database pointer against Close() while readers use it.
  mutable std::shared_mutex db_mu_;
  rocksdb::DB* db_;
  rocksdb::ColumnFamilyHandle* default_cf_;
  rocksdb::ColumnFamilyHandle* fences_cf_;
  rocksdb::ColumnFamilyHandle* rejections_cf_;
  rocksdb::ColumnFamilyHandle* locks_cf_;
  rocksdb::ColumnFamilyHandle* lock_audit_cf_;
  rocksdb::ColumnFamilyHandle* repairs_cf_;
  std::atomic<bool> open_{true};
  // False from a failed write until RocksDB accepts writes again (Ready() and /readyz).
  std::atomic<bool> healthy_{true};

  // The writer's queue. enqueued_/completed_ count operations so Flush() can wait for a drain.
  mutable std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable drained_cv_;
  // A vector, not a deque: WriteOp is larger than a deque node's 512 bytes, so a deque made one
  // allocation per enqueued operation. The writer swaps the whole queue out when it can.
  std::vector<WriteOp> queue_;
  std::size_t queued_advances_ = 0;  // AdvanceOps in queue_
  // While the writer gathers a group commit: the queued advances it waits for (Enqueue wakes
  // it only then, not once per advance). Zero otherwise: any operation wakes it.
  std::size_t gather_target_ = 0;
  std::uint64_t enqueued_ = 0;
  std::uint64_t completed_ = 0;
  // Refused writes' audit records, apart from queue_ (see RejectionQueue); queued_rejections_
  // and settled_rejections_ count them as enqueued_/completed_ count queue_'s operations.
  RejectionQueue rejections_;
  std::uint64_t queued_rejections_ = 0;
  std::uint64_t settled_rejections_ = 0;
  bool closing_ = false;
  Stats stats_;

  // Owned by the writer thread.
  std::uint64_t next_rejection_sequence_;
  std::uint64_t next_audit_sequence_;
  std::uint64_t next_repair_sequence_;
  bool needs_resume_ = false;  // a write failed: RocksDB must leave its error state first
  // The previous round's advances and how long its synced write took (group_commit_wait).
  std::size_t last_round_advances_ = 0;
  std::chrono::steady_clock::duration last_sync_duration_{};
  // Probing for larger rounds (GatherGroupCommit): every probe_interval_ rounds the gather asks
  // for half as many advances again as the last round carried. A probe that brings a larger
  // round keeps probing every round; one that does not doubles the interval, so clients that
  // are all in the round already rarely wait for company that does not exist.
  static constexpr std::size_t kMaxProbeInterval = 1024;
  std::size_t probe_interval_ = 1;
  std::size_t rounds_since_probe_ = 0;
  bool probing_ = false;  // the round being gathered is a probe
  // The stored value of fences this thread read or wrote lately. This thread is the fences'
  // only writer, so an entry is the truth until the next write of that key: an advance of a
  // fence it knows skips the read of the stored value (a MultiGet into the memtable and the
  // tables, ~6k of ~50k instructions per advance). Emptied when it reaches
  // kKnownFencesLimit entries and after any failed write (RocksDB may have applied part of it).
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const {
      return std::hash<std::string_view>{}(key);
    }
  };
  std::unordered_map<std::string, FenceRecord, KeyHash, std::equal_to<>> known_fences_;
  static constexpr std::size_t kKnownFencesLimit = 65536;
  void RememberFence(std::string_view key, const FenceRecord& record);

  // One key's advances in a round, folded to the highest token requested.
  struct Fold {
    std::string_view key;
    Token token = 0;
    std::int64_t now_ms = 0;
    Status status;
    FenceRecord current;  // the stored value before this round
    FenceRecord result;   // the value after it, handed to the key's callbacks
    bool written = false;
  };
  // CommitAdvances' working memory, kept between rounds (writer thread only): a round then
  // allocates nothing of its own.
  std::vector<std::pair<std::string_view, std::size_t>> round_keys_;  // (key, advance index)
  std::vector<Fold> folds_;
  std::vector<std::size_t> fold_of_;  // advance index -> its fold

  std::thread writer_;
};

}  // namespace fencegate::lockstore
