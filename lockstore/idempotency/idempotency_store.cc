#include "lockstore/idempotency/idempotency_store.h"

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <filesystem>
#include <system_error>
#include <unordered_map>

#include "lockstore/rocksdb/rocksdb_logger.h"
#include "lockstore/rocksdb/rocksdb_status.h"
#include "lockstore/rocksdb/store_identity.h"

namespace fencegate::lockstore {
namespace {

constexpr char kRecordsFamily[] = "idempotency";
constexpr char kFormatKey[] = "fencegate.format";
constexpr char kFormatValue[] = "idempotency-v1";
constexpr char kEpochKey[] = "epoch";

// Losing the records costs retries their replay (a retry of a write recorded in the lost store
// is applied again), not fences; the store is checked like the fence store so that the loss is
// an operator's decision.
StoreCheckOptions IdempotencyStoreCheck(const std::string& path) {
  StoreCheckOptions check;
  check.path = path;
  check.what = "idempotency store";
  const std::string move_away =
      "To recover (README.md, Operations): restore it from a backup, or move " + path + " and " +
      IdentityFilePath(path) +
      " away to start with an empty one (a retry of a write recorded in the lost store is then "
      "applied again).";
  check.if_lost = move_away;
  check.if_log_lost = move_away;
  return check;
}

std::string EncodeEpoch(std::uint64_t epoch) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i, epoch >>= 8) out[i] = static_cast<char>(epoch & 0xff);
  return out;
}

std::uint64_t DecodeEpoch(std::string_view bytes) {
  std::uint64_t epoch = 0;
  for (char c : bytes) epoch = (epoch << 8) | static_cast<unsigned char>(c);
  return epoch;
}

std::int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Status IdempotencyStore::Open(const IdempotencyStoreOptions& options,
                              std::unique_ptr<IdempotencyStore>* store) {
  if (options.path.empty()) return Status::InvalidArgument("idempotency store path is empty");
  const StoreCheckOptions check = IdempotencyStoreCheck(options.path);
  StorePresence presence;
  if (Status present = CheckStorePresence(check, &presence); !present.ok()) return present;
  std::error_code ec;
  std::filesystem::create_directories(options.path, ec);
  if (ec) return Status::IOError("cannot create " + options.path + ": " + ec.message());

  rocksdb::DBOptions db_options;
  db_options.info_log = MakeForwardingLogger(options.log);
  db_options.create_if_missing = presence.create;
  // A torn last record is a write nobody was told had succeeded; damage before it is refused.
  db_options.wal_recovery_mode = rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  db_options.create_missing_column_families = true;
  db_options.max_open_files = 64;
  db_options.keep_log_file_num = 2;
  rocksdb::ColumnFamilyOptions family;
  family.write_buffer_size = 8u << 20;
  const std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
      {kRecordsFamily, family},
  };
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(db_options, options.path, families, &handles, &db);
  if (!s.ok()) return OpenError(check, s);
  auto fail = [&](Status status) {
    for (auto* handle : handles) db->DestroyColumnFamilyHandle(handle);
    delete db;
    return status;
  };
  StoreIdentity identity;
  if (Status reconciled = ReconcileStoreIdentity(*db, handles[0], check, presence, &identity);
      !reconciled.ok()) {
    return fail(reconciled);
  }

  std::string format;
  s = db->Get(rocksdb::ReadOptions(), handles[0], kFormatKey, &format);
  if (s.ok() && format != kFormatValue) {
    return fail(Status::Corruption(options.path + " holds an unknown format \"" + format + "\""));
  }
  if (!s.ok() && !s.IsNotFound()) return fail(FromRocksDb(s));
  // Each open is a new epoch, stored before any marker of it can be: in-flight markers of an
  // older epoch are then known to be orphans of a gateway that stopped.
  std::string stored_epoch;
  s = db->Get(rocksdb::ReadOptions(), handles[0], kEpochKey, &stored_epoch);
  if (!s.ok() && !s.IsNotFound()) return fail(FromRocksDb(s));
  const std::uint64_t epoch = (s.ok() ? DecodeEpoch(stored_epoch) : 0) + 1;
  rocksdb::WriteBatch batch;
  batch.Put(handles[0], kFormatKey, kFormatValue);
  batch.Put(handles[0], kEpochKey, EncodeEpoch(epoch));
  rocksdb::WriteOptions sync;
  sync.sync = true;
  s = db->Write(sync, &batch);
  if (!s.ok()) return fail(FromRocksDb(s));

  store->reset(new IdempotencyStore(options, db, std::move(handles), epoch));
  return Status::Ok();
}

IdempotencyStore::IdempotencyStore(const IdempotencyStoreOptions& options, rocksdb::DB* db,
                                   std::vector<rocksdb::ColumnFamilyHandle*> handles,
                                   std::uint64_t epoch)
    : options_(options),
      db_(db),
      default_cf_(handles[0]),
      records_cf_(handles[1]),
      epoch_(epoch),
      writer_([this] { WriterLoop(); }) {}

IdempotencyStore::~IdempotencyStore() { Close(); }

void IdempotencyStore::Close() {
  {
    std::lock_guard lock(mu_);
    if (closing_) return;
    closing_ = true;
  }
  work_cv_.notify_all();
  writer_.join();  // drains the queue first
  db_->DestroyColumnFamilyHandle(default_cf_);
  db_->DestroyColumnFamilyHandle(records_cf_);
  db_->Close().PermitUncheckedError();
  delete db_;
  db_ = nullptr;
}

bool IdempotencyStore::Ready() const {
  std::lock_guard lock(mu_);
  return healthy_ && !closing_;
}

void IdempotencyStore::Begin(std::string key, IdempotencyRecord marker, BeginCallback callback) {
  marker.state = IdempotencyRecord::State::kInFlight;
  marker.epoch = epoch_;
  Op op = BeginOp{std::move(key), std::move(marker), std::move(callback)};
  if (!Enqueue(op)) {
    BeginResult closed;
    closed.status = Status::Unavailable("idempotency store is closed");
    std::get<BeginOp>(op).callback(std::move(closed));
  }
}

void IdempotencyStore::Finish(std::string key, IdempotencyRecord record, WriteCallback callback) {
  Op op = FinishOp{std::move(key), std::move(record), std::move(callback)};
  if (!Enqueue(op)) {
    std::get<FinishOp>(op).callback(Status::Unavailable("idempotency store is closed"));
  }
}

void IdempotencyStore::Abandon(std::string key, WriteCallback callback) {
  Op op = FinishOp{std::move(key), std::nullopt, std::move(callback)};
  if (!Enqueue(op)) {
    std::get<FinishOp>(op).callback(Status::Unavailable("idempotency store is closed"));
  }
}

void IdempotencyStore::Sweep(std::int64_t now_ms, SweepCallback callback) {
  Op op = SweepOp{now_ms, std::move(callback)};
  if (!Enqueue(op)) std::get<SweepOp>(op).callback(0);
}

bool IdempotencyStore::Enqueue(Op& op) {
  {
    std::lock_guard lock(mu_);
    if (closing_) return false;
    queue_.push_back(std::move(op));
  }
  work_cv_.notify_one();
  return true;
}

void IdempotencyStore::WriterLoop() {
  const auto now_ms = options_.now_ms ? options_.now_ms : SystemNowMs;
  DeleteExpired(now_ms());
  auto next_sweep = std::chrono::steady_clock::now() + options_.sweep_interval;
  std::vector<Op> round;
  while (true) {
    {
      std::unique_lock lock(mu_);
      work_cv_.wait_until(lock, next_sweep, [this] { return closing_ || !queue_.empty(); });
      if (queue_.empty() && closing_) return;
      round.clear();
      while (!queue_.empty()) {
        round.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    if (std::chrono::steady_clock::now() >= next_sweep) {
      DeleteExpired(now_ms());
      next_sweep = std::chrono::steady_clock::now() + options_.sweep_interval;
    }
    if (!round.empty()) CommitRound(round);
  }
}

// One synced batch for every claim and outcome queued together. Claims are decided in queue
// order against the stored records plus this round's own writes, so two claims of one key in
// one round still see each other.
void IdempotencyStore::CommitRound(std::vector<Op>& round) {
  using Kind = BeginResult::Kind;
  std::unordered_map<std::string, std::optional<IdempotencyRecord>> pending;
  std::vector<BeginResult> results(round.size());
  std::vector<std::size_t> sweeps;
  rocksdb::WriteBatch batch;
  for (std::size_t i = 0; i < round.size(); ++i) {
    if (auto* sweep = std::get_if<SweepOp>(&round[i])) {
      sweeps.push_back(i);
      (void)sweep;
      continue;
    }
    if (auto* finish = std::get_if<FinishOp>(&round[i])) {
      if (finish->record) {
        batch.Put(records_cf_, finish->key, EncodeIdempotencyRecord(*finish->record));
      } else {
        batch.Delete(records_cf_, finish->key);
      }
      pending[finish->key] = finish->record;
      continue;
    }
    auto& begin = std::get<BeginOp>(round[i]);
    BeginResult& result = results[i];
    std::optional<IdempotencyRecord> existing;
    if (auto found = pending.find(begin.key); found != pending.end()) {
      existing = found->second;
    } else {
      std::string value;
      const rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), records_cf_, begin.key, &value);
      if (s.ok()) {
        IdempotencyRecord decoded;
        result.status = DecodeIdempotencyRecord(value, &decoded);
        if (!result.status.ok()) continue;  // kError: a record we cannot read is not ignored
        existing = std::move(decoded);
      } else if (!s.IsNotFound()) {
        result.status = FromRocksDb(s);
        continue;
      }
    }
    if (existing && existing->expires_ms > begin.marker.created_ms) {
      result.kind = Kind::kExisting;
      result.record = std::move(*existing);
      if (result.record.state == IdempotencyRecord::State::kInFlight &&
          result.record.epoch != epoch_) {
        result.record.state = IdempotencyRecord::State::kUnknown;
      }
      continue;
    }
    result.kind = Kind::kStarted;
    batch.Put(records_cf_, begin.key, EncodeIdempotencyRecord(begin.marker));
    pending[begin.key] = begin.marker;
  }

  Status written;
  if (batch.Count() > 0) {
    rocksdb::WriteOptions sync;
    sync.sync = true;
    written = FromRocksDb(db_->Write(sync, &batch));
    const bool healthy = written.ok();
    bool changed = false;
    {
      std::lock_guard lock(mu_);
      changed = healthy_ != healthy;
      healthy_ = healthy;
    }
    if (changed && options_.log) {
      if (healthy) {
        options_.log(LogSeverity::kInfo, "idempotency store: writes succeed again");
      } else {
        options_.log(LogSeverity::kError, "idempotency store: write failed: " + written.ToString());
      }
    }
  }
  for (std::size_t i = 0; i < round.size(); ++i) {
    if (auto* finish = std::get_if<FinishOp>(&round[i])) {
      if (finish->callback) finish->callback(written);
    } else if (auto* begin = std::get_if<BeginOp>(&round[i])) {
      BeginResult& result = results[i];
      if (result.kind == Kind::kStarted && !written.ok()) {
        result.kind = Kind::kError;
        result.status = written;
      }
      begin->callback(std::move(result));
    }
  }
  for (std::size_t i : sweeps) {
    auto& sweep = std::get<SweepOp>(round[i]);
    const std::size_t deleted = DeleteExpired(sweep.now_ms);
    if (sweep.callback) sweep.callback(deleted);
  }
}

// Expired records are deleted unsynced: losing a deletion to a crash only keeps a record
// that Begin() already treats as absent.
std::size_t IdempotencyStore::DeleteExpired(std::int64_t now_ms) {
  rocksdb::WriteBatch batch;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), records_cf_));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    IdempotencyRecord record;
    if (!DecodeIdempotencyRecord(it->value().ToStringView(), &record).ok()) continue;
    if (record.expires_ms <= now_ms) batch.Delete(records_cf_, it->key());
  }
  it.reset();
  if (batch.Count() == 0) return 0;
  const rocksdb::Status s = db_->Write(rocksdb::WriteOptions(), &batch);
  if (!s.ok()) {
    if (options_.log)
      options_.log(LogSeverity::kError, "idempotency store: sweep failed: " + s.ToString());
    return 0;
  }
  return batch.Count();
}

}  // namespace fencegate::lockstore
