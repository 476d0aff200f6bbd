#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include "lockstore/idempotency/idempotency_record.h"
#include "lockstore/log_sink.h"
#include "lockstore/status.h"

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
}  // namespace rocksdb

namespace fencegate::lockstore {

struct IdempotencyStoreOptions {
  // Directory of the database (its own RocksDB, apart from the fence store, so replayed
  // response bodies never share a write-ahead log or cache with fence advances).
  std::string path;
  // Health changes and RocksDB's errors, one line per call, from store threads. Empty: dropped.
  LogSink log;
  // Expired records are deleted this often (and once at open), on the writer thread.
  std::chrono::milliseconds sweep_interval = std::chrono::minutes(10);
  // Wall clock for the periodic sweep; the default reads the system clock.
  std::function<std::int64_t()> now_ms;
};

// Durable idempotency records keyed by an opaque scoped key. Every operation runs on one
// writer thread, in arrival order, and is acknowledged only after its synced write: so
// Begin() is an atomic "claim the key unless a live record holds it" across all network
// threads, and a claim survives kill -9. Operations queued together share one fsync.
class IdempotencyStore {
 public:
  struct BeginResult {
    enum class Kind {
      kStarted,   // no live record: `marker` is now stored (durably); the caller forwards
      kExisting,  // a live record holds the key: `record` (an in-flight marker of an older
                  // epoch is reported as kUnknown: nobody will finish it)
      kError,     // the store could not read or write: `status`
    };
    Kind kind = Kind::kError;
    IdempotencyRecord record;
    Status status;
  };
  using BeginCallback = std::function<void(BeginResult)>;
  using WriteCallback = std::function<void(Status)>;
  using SweepCallback = std::function<void(std::size_t deleted)>;

  static Status Open(const IdempotencyStoreOptions& options,
                     std::unique_ptr<IdempotencyStore>* store);
  ~IdempotencyStore();
  IdempotencyStore(const IdempotencyStore&) = delete;
  IdempotencyStore& operator=(const IdempotencyStore&) = delete;

  // Claims `key` with `marker` (state kInFlight; its epoch is set here) unless a record whose
  // expires_ms is after marker.created_ms holds it. Callbacks run on the writer thread (or at
  // once on the caller's with Unavailable once closed).
  void Begin(std::string key, IdempotencyRecord marker, BeginCallback callback);
  // Replaces the key's record with the outcome (kCompleted or kUnknown).
  void Finish(std::string key, IdempotencyRecord record, WriteCallback callback);
  // Deletes the key's record: the request provably never reached the backend.
  void Abandon(std::string key, WriteCallback callback);
  // Deletes every record expired at `now_ms`.
  void Sweep(std::int64_t now_ms, SweepCallback callback);

  // This open's epoch: one more than the previous open's, stored durably at open.
  std::uint64_t epoch() const { return epoch_; }
  bool Ready() const;
  // Drains the writer and closes the database. Idempotent; the destructor calls it.
  void Close();

 private:
  struct BeginOp {
    std::string key;
    IdempotencyRecord marker;
    BeginCallback callback;
  };
  struct FinishOp {
    std::string key;
    std::optional<IdempotencyRecord> record;  // nullopt: delete
    WriteCallback callback;
  };
  struct SweepOp {
    std::int64_t now_ms = 0;
    SweepCallback callback;
  };
  using Op = std::variant<BeginOp, FinishOp, SweepOp>;

  IdempotencyStore(const IdempotencyStoreOptions& options, rocksdb::DB* db,
                   std::vector<rocksdb::ColumnFamilyHandle*> handles, std::uint64_t epoch);
  [[nodiscard]] bool Enqueue(Op& op);
  void WriterLoop();
  void CommitRound(std::vector<Op>& round);
  std::size_t DeleteExpired(std::int64_t now_ms);

  const IdempotencyStoreOptions options_;
  rocksdb::DB* db_;
  rocksdb::ColumnFamilyHandle* default_cf_;
  rocksdb::ColumnFamilyHandle* records_cf_;
  const std::uint64_t epoch_;

  mutable std::mutex mu_;
  std::condition_variable work_cv_;
  std::deque<Op> queue_;
  bool closing_ = false;
  bool healthy_ = true;
  std::thread writer_;
};

}  // namespace fencegate::lockstore
