#include "lockstore/rocksdb/rocksdb_fence_store.h"

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/listener.h>
#include <rocksdb/memtablerep.h>
#include <rocksdb/options.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "lockstore/codec/fence_repair_codec.h"
#include "lockstore/codec/record_codec.h"
#include "lockstore/rocksdb/preextended_wal.h"
#include "lockstore/rocksdb/rocksdb_fence_recovery.h"
#include "lockstore/rocksdb/rocksdb_fence_store_impl.h"
#include "lockstore/rocksdb/rocksdb_logger.h"
#include "lockstore/rocksdb/rocksdb_status.h"

namespace fencegate::lockstore {
namespace {

constexpr char kFencesFamily[] = "fences";
constexpr char kRejectionsFamily[] = "rejections";
constexpr char kLocksFamily[] = "locks";
constexpr char kLockAuditFamily[] = "lock_audit";
constexpr char kRepairsFamily[] = "fence_repairs";
constexpr char kFormatKey[] = "fencegate.format";
constexpr char kFormatValue[] = "fences-v1";

// RocksDB's own recovery from a full disk waits until the free space reaches its largest write
// buffer (16 MiB here) and refuses Resume() with Busy until then, so a disk with a few MiB free
// again would keep the store failed. For that error the writer thread resumes the database
// itself instead, as soon as a write succeeds (RocksDbFenceStore::TryResume); RocksDB keeps its
// own retries for the errors it marks retryable.
class ManualNoSpaceRecovery final : public rocksdb::EventListener {
 public:
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason, rocksdb::Status error,
                            bool* auto_recovery) override {
    if (error.IsNoSpace()) *auto_recovery = false;
  }
};

rocksdb::DBOptions MakeDbOptions(const RocksDbFenceStoreOptions& store_options) {
  rocksdb::DBOptions options;
  // Appends to the write-ahead log commit no file system metadata (preextended_wal.h).
  options.env = PreextendedWalEnv();
  options.info_log = MakeForwardingLogger(store_options.log);
  options.listeners.push_back(std::make_shared<ManualNoSpaceRecovery>());
  options.create_missing_column_families = true;
  // Bounds file descriptors; index and filter blocks live in the block cache, so a table file
  // that is not open costs one open() on its next read, not a memory spike.
  options.max_open_files = 256;
  // The rejections family is written unsynced and flushed rarely; without a cap the WAL could
  // not be recycled until it is, so force flushes once the WAL reaches this size.
  options.max_total_wal_size = 64u << 20;
  options.keep_log_file_num = 4;
  options.max_background_jobs = 2;
  // Required by the fences family's in-place updates (MakeFencesFamilyOptions); writes come
  // from one store thread anyway, so parallel memtable inserts had nothing to do.
  options.allow_concurrent_memtable_write = false;
  return options;
}

// Smallest block cache shard. RocksDB's default (-1) splits a cache into shards of 512 KiB,
// 64 of them at 32 MiB, and a shard cannot keep a block larger than itself: such a block is
// read, checksummed and thrown away on every lookup. A file's whole index or filter (pinned,
// see MakeFamilyOptions) can reach ~1.25 MB per million fence keys (a filter at 10 bits a
// key); 4 MiB shards keep it. The gateway reads the store from a few network threads, so a
// few shards are enough to keep lock contention low.
constexpr std::size_t kMinCacheShardBytes = 4u << 20;
constexpr int kMaxCacheShardBits = 6;  // RocksDB's own upper bound

std::shared_ptr<rocksdb::Cache> MakeBlockCache(std::size_t capacity) {
  int shard_bits = 0;
  while (shard_bits < kMaxCacheShardBits && (capacity >> (shard_bits + 1)) >= kMinCacheShardBytes) {
    ++shard_bits;
  }
  rocksdb::LRUCacheOptions options;
  options.capacity = capacity;
  options.num_shard_bits = shard_bits;
  // Over capacity, inserts still succeed and evict: a read must never fail for lack of cache.
  options.strict_capacity_limit = false;
  // Up to this share of the cache is kept for index and filter blocks (inserted with high
  // priority, see MakeFamilyOptions): a scan of cold data blocks must not push them out
  // before their table reader pins them.
  options.high_pri_pool_ratio = 0.5;
  return rocksdb::NewLRUCache(options);
}

rocksdb::ColumnFamilyOptions MakeFamilyOptions(const std::shared_ptr<rocksdb::Cache>& cache,
                                               std::size_t write_buffer_bytes,
                                               rocksdb::CompressionType compression) {
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = cache;
  // Every read is a point lookup of one whole key (no prefix lookups). Filters on every level
  // but the last (optimize_filters_for_hits, below).
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table.whole_key_filtering = true;
  // Index and filter blocks are charged to the block cache, and pinned there for the life of
  // their table reader: a lookup never re-reads or re-checksums them. Pinned, one binary-search
  // index per file is cheaper to search than a partitioned one (bench many_keys, 1,000,000
  // keys, callgrind: 51.3k -> 47.8k instructions per fenced PUT), and small: 154 KB for a
  // million keys in one 30 MB file (one entry per 4 KiB data block). What is pinned grows
  // with the store, at about 1/200 of its data; the data blocks stay bounded by
  // block_cache_bytes. (Unpinned, whole-file metadata was evicted and re-read per lookup:
  // 235 us of CPU per fenced PUT with 1M keys, which partitioning had cured before.)
  table.cache_index_and_filter_blocks = true;
  table.cache_index_and_filter_blocks_with_high_priority = true;
  table.index_type = rocksdb::BlockBasedTableOptions::kBinarySearch;
  table.metadata_cache_options.unpartitioned_pinning = rocksdb::PinningTier::kAll;
  // A small hash table in each data block finds a key without the binary search over restart
  // points: fewer key comparisons per point lookup for ~5 % larger blocks. Iterators (the
  // rejections trail) still use the binary index.
  table.data_block_index_type = rocksdb::BlockBasedTableOptions::kDataBlockBinaryAndHash;
  // The hash finds the restart interval holding a key; the lookup then decodes the interval's
  // keys one by one. Four keys an interval instead of 16 (bench many_keys, 1,000,000 keys,
  // callgrind: 41.2k -> 40.3k instructions per fenced PUT; 8: 40.7k, 1: 41.7k) for ~7 % more
  // table bytes (less prefix compression).
  table.block_restart_interval = 4;

  rocksdb::ColumnFamilyOptions options;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  options.write_buffer_size = write_buffer_bytes;
  options.max_write_buffer_number = 2;
  options.compression = compression;
  // No filter on the last level, where nearly all keys live once the store is compacted: the
  // common lookup is of a key that exists (a holder writing again after its state left the
  // key cache), for which a filter is pure cost (51.3k instead of 55.7k instructions per
  // fenced PUT, same bench as above), and it is ~90 % of all filter memory. The first use of a
  // new key reads an index entry and a data block instead of a filter probe.
  options.optimize_filters_for_hits = true;
  return options;
}

// Every advance rewrites its fence's value, of fixed size. Updated in place, the memtable holds
// one entry per fence instead of one per advance, and a flush writes each fence once; the WAL
// still records every advance. Nothing iterates this family or reads it at a snapshot, which
// in-place updates would not keep consistent.
//
// The memtable is a hash table keyed by the whole fence key (a no-op prefix transform), not one
// skip list over every fence written since the last flush. An advance looks its key up there
// twice (the gateway's read of a key it has not cached, then the writer's in-place update), and
// in a skip list of a few thousand fences each lookup was dozens of key comparisons. bench
// put_advance_64 (4096 fences advanced in turn over 64 connections) under callgrind: 45.2k ->
// 33.7k instructions per advance. Only a flush needs the memtable in key order; it sorts it
// once. The SST filters are still built from whole keys (the "prefix" is the whole key).
constexpr std::size_t kFenceMemtableBuckets = 1u << 16;

rocksdb::ColumnFamilyOptions MakeFencesFamilyOptions(const std::shared_ptr<rocksdb::Cache>& cache) {
  rocksdb::ColumnFamilyOptions options =
      MakeFamilyOptions(cache, 16u << 20, rocksdb::kNoCompression);
  options.inplace_update_support = true;
  options.prefix_extractor.reset(rocksdb::NewNoopTransform());
  options.memtable_factory.reset(rocksdb::NewHashLinkListRepFactory(
      kFenceMemtableBuckets, /*huge_page_tlb_size=*/0, /*bucket_entries_logging_threshold=*/4096,
      /*if_log_bucket_dist_when_flash=*/false));
  return options;
}

}  // namespace

Status RocksDbFenceStore::Open(const RocksDbFenceStoreOptions& options,
                               std::unique_ptr<RocksDbFenceStore>* store) {
  if (options.path.empty()) return Status::InvalidArgument("fence store path is empty");
  if (options.max_batch == 0) return Status::InvalidArgument("max_batch must be at least 1");
  if (options.rejection_retention == 0) {
    return Status::InvalidArgument("rejection_retention must be at least 1");
  }
  if (options.rejection_queue == 0 || options.rejection_batch == 0) {
    return Status::InvalidArgument("rejection_queue and rejection_batch must be at least 1");
  }
  const StoreCheckOptions check = FenceStoreCheck(options);
  StorePresence presence;
  if (Status present = CheckStorePresence(check, &presence); !present.ok()) return present;
  std::error_code ec;
  std::filesystem::create_directories(options.path, ec);
  if (ec) return Status::IOError("cannot create " + options.path + ": " + ec.message());

  auto cache = MakeBlockCache(options.block_cache_bytes);
  // Fences are stored uncompressed: a lookup whose data block is not in the block cache (a
  // large store read at random) would otherwise decompress a whole block to find one 16-byte
  // value, about a sixth of the lookup's instructions (bench many_keys, 1,000,000 keys, under
  // callgrind). The price is disk and page cache (5.5 -> ~35 MB per million keys), not memory
  // of the process: the block cache holds uncompressed blocks either way. Files written
  // compressed by an earlier version stay readable. The audit families keep Snappy: their
  // records are text, read rarely.
  const auto snappy = rocksdb::kSnappyCompression;
  const std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, MakeFamilyOptions(cache, 1u << 20, snappy)},
      {kFencesFamily, MakeFencesFamilyOptions(cache)},
      {kRejectionsFamily, MakeFamilyOptions(cache, 4u << 20, snappy)},
      {kLocksFamily, MakeFamilyOptions(cache, 1u << 20, snappy)},
      {kLockAuditFamily, MakeFamilyOptions(cache, 1u << 20, snappy)},
      {kRepairsFamily, MakeFamilyOptions(cache, 1u << 20, snappy)},
  };
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  rocksdb::DBOptions db_options = MakeDbOptions(options);
  db_options.create_if_missing = presence.create;
  db_options.wal_recovery_mode = RecoveryMode(options);
  rocksdb::Status s = rocksdb::DB::Open(db_options, options.path, families, &handles, &db);
  // Only after RocksDB refused the log, and so holds no lock on the store: nothing else writes it.
  bool cut = false;
  if (s.IsCorruption()) {
    if (Status cutting = CutTornWalRecords(options.path, options.log, &cut); !cutting.ok()) {
      return cutting;
    }
  }
  if (cut) s = rocksdb::DB::Open(db_options, options.path, families, &handles, &db);
  if (!s.ok()) return OpenError(check, s);

  auto close_db = [&] {
    for (auto* handle : handles) db->DestroyColumnFamilyHandle(handle);
    delete db;
  };

  StoreIdentity identity;
  if (Status reconciled = ReconcileStoreIdentity(*db, handles[0], check, presence, &identity);
      !reconciled.ok()) {
    close_db();
    return reconciled;
  }
  if (presence.create && options.log) {
    options.log(LogSeverity::kInfo, "created a new fence store at " + options.path + " (store " +
                                        identity.id + ", identity in " +
                                        IdentityFilePath(options.path) + ")");
  }
  std::vector<FenceFloor> floors;
  if (Status loaded = LoadFenceFloors(*db, handles[0], &floors); !loaded.ok()) {
    close_db();
    return loaded;
  }

  std::string format;
  s = db->Get(rocksdb::ReadOptions(), handles[0], kFormatKey, &format);
  if (s.IsNotFound()) {
    rocksdb::WriteOptions sync;
    sync.sync = true;
    s = db->Put(sync, handles[0], kFormatKey, kFormatValue);
  } else if (s.ok() && format != kFormatValue) {
    close_db();
    return Status::Corruption(options.path + " holds an unknown format \"" + format + "\"");
  }
  if (!s.ok()) {
    close_db();
    return FromRocksDb(s);
  }

  // Sequences continue after the newest stored rejection, so they stay increasing across runs.
  std::uint64_t next_sequence = 1;
  {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), handles[2]));
    it->SeekToLast();
    if (it->Valid()) {
      Status decoded = DecodeSequenceKey(it->key().ToStringView(), &next_sequence);
      if (!decoded.ok()) {
        it.reset();
        close_db();
        return decoded;
      }
      ++next_sequence;
    } else if (!it->status().ok()) {
      Status error = FromRocksDb(it->status());
      it.reset();
      close_db();
      return error;
    }
  }
  // Audit sequences continue the same way.
  std::uint64_t next_audit_sequence = 1;
  {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), handles[4]));
    it->SeekToLast();
    Status decoded = it->Valid() ? DecodeSequenceKey(it->key().ToStringView(), &next_audit_sequence)
                                 : FromRocksDb(it->status());
    if (!decoded.ok()) {
      it.reset();
      close_db();
      return decoded;
    }
    if (it->Valid()) ++next_audit_sequence;
  }
  // Repair sequences continue the same way.
  std::uint64_t next_repair_sequence = 1;
  {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), handles[5]));
    it->SeekToLast();
    Status decoded = it->Valid()
                         ? DecodeSequenceKey(it->key().ToStringView(), &next_repair_sequence)
                         : FromRocksDb(it->status());
    if (!decoded.ok()) {
      it.reset();
      close_db();
      return decoded;
    }
    if (it->Valid()) ++next_repair_sequence;
  }
  // Trim what a smaller retention than last run's leaves behind; afterwards each new record
  // deletes the one that falls out of the window.
  if (next_sequence > options.rejection_retention + 1) {
    const std::string begin = EncodeSequenceKey(0);
    const std::string end = EncodeSequenceKey(next_sequence - options.rejection_retention);
    s = db->DeleteRange(rocksdb::WriteOptions(), handles[2], begin, end);
    if (!s.ok()) {
      close_db();
      return FromRocksDb(s);
    }
  }

  store->reset(new RocksDbFenceStore(options, db, std::move(handles), next_sequence,
                                     next_audit_sequence, next_repair_sequence));
  // Before any advance can be queued: the writer reads them only for advances.
  (*store)->floors_ = std::move(floors);
  return Status::Ok();
}

RocksDbFenceStore::RocksDbFenceStore(const RocksDbFenceStoreOptions& options, rocksdb::DB* db,
                                     std::vector<rocksdb::ColumnFamilyHandle*> handles,
                                     std::uint64_t next_rejection_sequence,
                                     std::uint64_t next_audit_sequence,
                                     std::uint64_t next_repair_sequence)
    : options_(options),
      db_(db),
      default_cf_(handles[0]),
      fences_cf_(handles[1]),
      rejections_cf_(handles[2]),
      locks_cf_(handles[3]),
      lock_audit_cf_(handles[4]),
      repairs_cf_(handles[5]),
      rejections_(options.rejection_queue, options.rejection_batch),
      next_rejection_sequence_(next_rejection_sequence),
      next_audit_sequence_(next_audit_sequence),
      next_repair_sequence_(next_repair_sequence),
      writer_([this] { WriterLoop(); }) {}

RocksDbFenceStore::~RocksDbFenceStore() { Close(); }

void RocksDbFenceStore::Close() {
  {
    std::lock_guard lock(mu_);
    if (closing_) return;
    closing_ = true;
  }
  open_ = false;
  work_cv_.notify_all();
  writer_.join();  // the writer drains the queue before it exits

  std::unique_lock lock(db_mu_);
  // Rejections were written unsynced; make them durable too before letting go.
  db_->FlushWAL(true).PermitUncheckedError();
  for (auto* handle :
       {default_cf_, fences_cf_, rejections_cf_, locks_cf_, lock_audit_cf_, repairs_cf_}) {
    db_->DestroyColumnFamilyHandle(handle);
  }
  db_->Close().PermitUncheckedError();
  delete db_;
  db_ = nullptr;
}

Status RocksDbFenceStore::CompactFences() {
  if (Status drained = Flush(); !drained.ok()) return drained;
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) return Status::Unavailable("fence store is closed");
  rocksdb::CompactRangeOptions options;
  options.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  options.change_level = true;
  return FromRocksDb(db_->CompactRange(options, fences_cf_, nullptr, nullptr));
}

RocksDbFenceStore::Stats RocksDbFenceStore::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void RocksDbFenceStore::Get(std::string_view key, GetCallback callback) {
  LocalRead read = *ReadLocal(key);
  callback(read.status, read.record);
}

std::optional<FenceStore::LocalRead> RocksDbFenceStore::ReadLocal(std::string_view key) {
  LocalRead read;
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) {
    read.status = Status::Unavailable("fence store is closed");
    return read;
  }
  // A plain read: it is served from the memtable, the block cache or the page cache and never
  // waits for an fsync, so doing it on the caller's thread is cheaper than a hop to another.
  rocksdb::PinnableSlice value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), fences_cf_, rocksdb::Slice(key), &value);
  if (s.ok()) {
    FenceRecord decoded;
    read.status = DecodeFenceValue(value.ToStringView(), &decoded);
    if (read.status.ok()) read.record = decoded;
  } else if (s.IsNotFound()) {
    read.record = FloorFor(key);
  } else {
    read.status = FromRocksDb(s);
  }
  return read;
}

void RocksDbFenceStore::Advance(std::string_view key, Token token, std::int64_t now_ms,
                                AdvanceCallback callback) {
  WriteOp op = AdvanceOp{std::string(key), token, now_ms, std::move(callback)};
  if (!Enqueue(op)) {
    std::get<AdvanceOp>(op).callback(Status::Unavailable("fence store is closed"), {});
  }
}

void RocksDbFenceStore::RecordRejection(RejectionRecord record) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (closing_) return;
    if (!rejections_.Push(record)) {
      ++stats_.rejections_dropped;
      return;
    }
    ++queued_rejections_;
    // The writer sleeps only when both queues are empty; while it gathers advances it takes
    // this record after that round anyway.
    wake = gather_target_ == 0 && rejections_.size() == 1;
  }
  if (wake) work_cv_.notify_one();
}

void RocksDbFenceStore::Repair(FenceRepairRecord record, RepairCallback callback) {
  WriteOp op = RepairOp{std::move(record), std::move(callback)};
  if (!Enqueue(op)) {
    RepairOp& repair = std::get<RepairOp>(op);
    repair.callback(Status::Unavailable("fence store is closed"), std::move(repair.record));
  }
}

std::vector<FenceRepairRecord> RocksDbFenceStore::RecentRepairs(std::size_t limit) {
  std::vector<FenceRepairRecord> out;
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) return out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), repairs_cf_));
  for (it->SeekToLast(); it->Valid() && out.size() < limit; it->Prev()) {
    FenceRepairRecord record;
    if (!DecodeSequenceKey(it->key().ToStringView(), &record.sequence).ok()) continue;
    if (!DecodeFenceRepairValue(it->value().ToStringView(), &record).ok()) continue;
    out.push_back(std::move(record));
  }
  return out;
}

bool RocksDbFenceStore::Enqueue(WriteOp& op) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (closing_) return false;
    if (std::holds_alternative<AdvanceOp>(op)) {
      ++stats_.advances;
      ++queued_advances_;
    }
    queue_.push_back(std::move(op));
    ++enqueued_;
    wake = gather_target_ == 0 || queued_advances_ >= gather_target_;
  }
  if (wake) work_cv_.notify_one();
  return true;
}

void RocksDbFenceStore::WaitForRecordedRejections() {
  // Rejections are written by the writer thread.
  std::unique_lock lock(mu_);
  const std::uint64_t target = queued_rejections_;
  drained_cv_.wait(lock, [&] { return closing_ || settled_rejections_ >= target; });
}

std::vector<RejectionRecord> RocksDbFenceStore::RecentRejections(std::size_t limit) {
  std::vector<RejectionRecord> out;
  WaitForRecordedRejections();
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) return out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), rejections_cf_));
  for (it->SeekToLast(); it->Valid() && out.size() < limit; it->Prev()) {
    RejectionRecord record;
    // A record that does not decode is skipped: the audit trail is advisory, and one bad record
    // must not hide the others from operators.
    if (!DecodeSequenceKey(it->key().ToStringView(), &record.sequence).ok()) continue;
    if (!DecodeRejectionValue(it->value().ToStringView(), &record).ok()) continue;
    out.push_back(std::move(record));
  }
  return out;
}

Status RocksDbFenceStore::Flush() {
  {
    std::unique_lock lock(mu_);
    if (closing_) return Status::Unavailable("fence store is closed");
    const std::uint64_t target = enqueued_;
    const std::uint64_t rejections_target = queued_rejections_;
    drained_cv_.wait(
        lock, [&] { return completed_ >= target && settled_rejections_ >= rejections_target; });
  }
  std::shared_lock lock(db_mu_);
  if (db_ == nullptr) return Status::Unavailable("fence store is closed");
  return FromRocksDb(db_->FlushWAL(true));
}

bool RocksDbFenceStore::Ready() const { return open_ && healthy_; }

void RocksDbFenceStore::TryResume() {
  rocksdb::Status s = db_->Resume();
  // Resume() can succeed on a disk that is still full (nothing it had to write needed space);
  // only a synced write proves advances can be made durable again. The format marker is the
  // one record whose rewrite changes nothing.
  if (s.ok()) {
    rocksdb::WriteOptions sync;
    sync.sync = true;
    s = db_->Put(sync, default_cf_, kFormatKey, kFormatValue);
  }
  needs_resume_ = !s.ok();
  SetHealthy(s.ok(), s);
}

void RocksDbFenceStore::SetHealthy(bool healthy, const rocksdb::Status& cause) {
  if (healthy_.exchange(healthy) == healthy || !options_.log) return;
  if (healthy) {
    options_.log(LogSeverity::kInfo, "fence store recovered: writes are durable again");
    return;
  }
  options_.log(LogSeverity::kError,
               "fence store write failed (" + cause.ToString() +
                   "): writes that need a token advance fail with 503 until it recovers");
}

Status OpenRocksDbFenceStore(const RocksDbFenceStoreOptions& options,
                             std::unique_ptr<FenceStore>* store) {
  std::unique_ptr<RocksDbFenceStore> concrete;
  Status status = RocksDbFenceStore::Open(options, &concrete);
  if (status.ok()) *store = std::move(concrete);
  return status;
}

}  // namespace fencegate::lockstore
