#include "lockstore/etcd/etcd_fence_store.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <iterator>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "lockstore/codec/fence_repair_codec.h"
#include "lockstore/etcd/etcd_advance_batch.h"
#include "lockstore/etcd/etcd_async_client.h"

namespace fencegate::lockstore::etcd {
namespace {

constexpr std::size_t kTokenDigits = 16;

}  // namespace

std::string EncodeEtcdTokenPrefix(Token token) {
  char digits[kTokenDigits + 1];
  std::snprintf(digits, sizeof digits, "%016llx", static_cast<unsigned long long>(token));
  return std::string(digits, kTokenDigits);
}

std::string EncodeEtcdFence(Token token, std::int64_t advanced_at_ms) {
  return EncodeEtcdTokenPrefix(token) + ":" + std::to_string(advanced_at_ms);
}

bool DecodeEtcdFence(std::string_view value, FenceRecord* out) {
  if (value.size() < kTokenDigits + 1 || value[kTokenDigits] != ':') return false;
  Token token = 0;
  const char* begin = value.data();
  auto parsed = std::from_chars(begin, begin + kTokenDigits, token, 16);
  if (parsed.ec != std::errc() || parsed.ptr != begin + kTokenDigits || token > kMaxToken) {
    return false;
  }
  std::int64_t at_ms = 0;
  const char* rest = begin + kTokenDigits + 1;
  parsed = std::from_chars(rest, begin + value.size(), at_ms);
  if (parsed.ec != std::errc() || parsed.ptr != begin + value.size()) return false;
  *out = FenceRecord{token, at_ms};
  return true;
}

class EtcdFenceStore::Impl {
 public:
  explicit Impl(EtcdFenceStoreOptions options)
      : options_(std::move(options)),
        counters_(std::make_shared<EtcdClientCounters>()),
        async_(options_.client, counters_, options_.connections_per_member) {
    for (std::size_t i = 0; i < std::max<std::size_t>(options_.threads, 1); ++i) {
      workers_.emplace_back([this] { WorkerLoop(); });
    }
    prober_ = std::thread([this] { ProbeLoop(); });
  }

  ~Impl() { Close(); }

  void Close() {
    {
      std::lock_guard lock(mu_);
      if (closing_) return;
      closing_ = true;
    }
    work_cv_.notify_all();
    probe_cv_.notify_all();
    {
      // Advances and reads queued before Close() still run: their callers are owed an answer,
      // and the gateway flushes before it closes.
      std::unique_lock lock(mu_);
      drained_cv_.wait(lock, [this] {
        return pending_advances_.empty() && pending_reads_.empty() && batches_in_flight_ == 0 &&
               reads_in_flight_ == 0;
      });
    }
    for (std::thread& worker : workers_) worker.join();
    prober_.join();
    async_.Close();
    ready_ = false;
  }

  // Queued like an advance: the reads that arrive while one read transaction is in flight share
  // the next one.
  void Get(std::string key, GetCallback callback) {
    bool closed = false;
    {
      std::lock_guard lock(mu_);
      if (!closing_) {
        ++submitted_;
        pending_reads_.push_back({std::move(key), std::move(callback)});
      } else {
        closed = true;
      }
    }
    if (closed) return callback(Closed(), std::nullopt);
    Pump();
  }

  // Queued for the next batch (Pump): the advances that arrive while a transaction is in
  // flight share the next one.
  void Advance(std::string key, Token token, std::int64_t now_ms, AdvanceCallback callback) {
    bool closed = false;
    {
      std::lock_guard lock(mu_);
      if (!closing_) {
        ++submitted_;
        pending_advances_.push_back({std::move(key), token, now_ms, std::move(callback)});
        pending_blocked_ = false;
      } else {
        closed = true;
      }
    }
    if (closed) return callback(Closed(), FenceRecord{});
    Pump();
  }

  void Repair(FenceRepairRecord record, RepairCallback callback) {
    Submit([this, record = std::move(record), callback](EtcdClient* client) mutable {
      if (client == nullptr) return callback(Closed(), record);
      const Status status = RepairOnce(*client, &record);
      // Lowered, or unknown: the next advance reads the key in its transaction's failure branch.
      seen_.Forget(FenceKey(record.fence_key));
      Track(status);
      callback(status, record);
    });
  }

  std::vector<FenceRepairRecord> RecentRepairs(std::size_t limit) {
    EtcdClient client(options_.client, counters_);
    std::vector<EtcdKeyValue> kvs;
    std::vector<FenceRepairRecord> out;
    if (!client.GetPrefix(options_.prefix + "repairs/", &kvs).ok()) return out;
    for (const EtcdKeyValue& kv : kvs) {
      FenceRepairRecord record;
      if (!DecodeFenceRepairValue(kv.value, &record).ok()) continue;
      record.sequence = static_cast<std::uint64_t>(kv.mod_revision);
      out.push_back(std::move(record));
    }
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.sequence > b.sequence; });
    if (out.size() > limit) out.resize(limit);
    return out;
  }

  void RecordRejection(RejectionRecord record) {
    std::lock_guard lock(rejections_mu_);
    record.sequence = next_rejection_++;
    rejections_.push_back(std::move(record));
    while (rejections_.size() > options_.rejection_retention) rejections_.pop_front();
  }

  std::vector<RejectionRecord> RecentRejections(std::size_t limit) {
    std::lock_guard lock(rejections_mu_);
    const std::size_t n = std::min(limit, rejections_.size());
    return {rejections_.rbegin(), rejections_.rbegin() + static_cast<std::ptrdiff_t>(n)};
  }

  RejectionPage QueryRejections(const RejectionQuery& query) {
    std::lock_guard lock(rejections_mu_);
    return QueryRejectionTrail(rejections_, query);
  }

  Status ListFences(std::string_view prefix, std::string_view after, std::size_t limit,
                    FencePage* page) {
    *page = FencePage{};
    EtcdClient client(options_.client, counters_);
    const std::string fences = options_.prefix + "fences/";
    // The smallest key above `after` is `after` followed by a NUL byte.
    std::string from = fences + std::string(after);
    if (!after.empty()) from.push_back('\0');
    std::vector<EtcdKeyValue> kvs;
    Status read =
        client.GetPrefixPage(fences + std::string(prefix), from, limit, &kvs, &page->more);
    if (!read.ok()) return read;
    for (const EtcdKeyValue& kv : kvs) {
      FenceListing listing{kv.key.substr(fences.size()), {}};
      // A record that does not decode is left out: the point read reports it.
      if (!DecodeEtcdFence(kv.value, &listing.record)) continue;
      page->fences.push_back(std::move(listing));
    }
    return Status::Ok();
  }

  Status Flush() {
    std::unique_lock lock(mu_);
    drained_cv_.wait(lock, [this] { return completed_ == submitted_; });
    return Status::Ok();
  }

  bool Ready() const { return ready_.load(); }

  Status ReadRouteBindings(std::map<std::string, std::string>* out) {
    EtcdClient client(options_.client, counters_);
    std::vector<EtcdKeyValue> kvs;
    const std::string prefix = options_.prefix + "routes/";
    if (Status read = client.GetPrefix(prefix, &kvs); !read.ok()) return read;
    out->clear();
    for (EtcdKeyValue& kv : kvs) (*out)[kv.key.substr(prefix.size())] = std::move(kv.value);
    return Status::Ok();
  }

  // One transaction: the replicas see a reload's bindings all at once.
  Status WriteRouteBindings(const std::map<std::string, std::string>& bindings) {
    if (bindings.empty()) return Status::Ok();
    EtcdClient client(options_.client, counters_);
    std::vector<EtcdOp> puts;
    for (const auto& [route, binding] : bindings) {
      EtcdOp put;
      put.kind = EtcdOp::Kind::kPut;
      put.key = options_.prefix + "routes/" + route;
      put.value = binding;
      puts.push_back(std::move(put));
    }
    EtcdTxnResult result;
    return client.Txn({}, puts, {}, true, &result);
  }

  Status HasFenceWithPrefix(std::string_view prefix, bool* found) {
    EtcdClient client(options_.client, counters_);
    return client.AnyWithPrefix(options_.prefix + "fences/" + std::string(prefix), found);
  }

  Stats stats() const {
    Stats stats;
    stats.round_trips = counters_->round_trips.load();
    stats.failovers = counters_->failovers.load();
    stats.errors = counters_->errors.load();
    stats.tls_failures = counters_->tls_failures.load();
    stats.txn_conflicts = advance_counters_.conflicts.load();
    stats.advances = advance_counters_.written.load();
    stats.advance_requests = advance_counters_.requested.load();
    stats.advance_txns = advance_counters_.txns.load();
    const EtcdAsyncClientStats client = async_.stats();
    stats.open_connections = client.open_connections;
    stats.in_flight_high_water = client.in_flight_high_water;
    return stats;
  }

 private:
  using Task = std::function<void(EtcdClient*)>;  // null client: the store closed

  static Status Closed() { return Status::Unavailable("the etcd fence store is closed"); }

  std::string FenceKey(std::string_view key) const {
    return options_.prefix + "fences/" + std::string(key);
  }

  Status RepairOnce(EtcdClient& client, FenceRepairRecord* record) {
    const std::string etcd_key = FenceKey(record->fence_key);
    std::optional<EtcdKeyValue> kv;
    Status status = client.Get(etcd_key, &kv);
    if (!status.ok()) return status;
    if (!kv) return Status::NotFound("fence '" + record->fence_key + "' was never advanced");
    FenceRecord current;
    if (!DecodeEtcdFence(kv->value, &current)) {
      return Status::Corruption("etcd fence record of '" + record->fence_key + "' did not decode");
    }
    if (record->new_highest >= current.highest) {
      return Status::InvalidArgument("a repair must lower the fence");
    }
    record->previous_highest = current.highest;
    const std::string audit_key =
        options_.prefix + "repairs/" + EncodeEtcdTokenPrefix(static_cast<Token>(kv->mod_revision));
    EtcdTxnResult result;
    status = client.Txn(
        {{etcd_key,
          EtcdCompare::Target::kModRevision,
          EtcdCompare::Result::kEqual,
          {},
          kv->mod_revision}},
        {{EtcdOp::Kind::kPut, etcd_key, EncodeEtcdFence(record->new_highest, record->at_ms), 0},
         {EtcdOp::Kind::kPut, audit_key, EncodeFenceRepairValue(*record), 0}},
        {}, /*idempotent=*/false, &result);
    if (!status.ok()) return status;
    if (!result.succeeded) {
      return Status::Unavailable("fence '" + record->fence_key + "' changed during the repair");
    }
    record->sequence = static_cast<std::uint64_t>(result.revision);
    return Status::Ok();
  }

  // Readiness follows what operations see, between probes too.
  void Track(const Status& status) {
    if (status.ok()) {
      SetReady(true, status);
    } else if (status.code() == Status::Code::kUnavailable) {
      SetReady(false, status);
    }
  }

  void SetReady(bool ready, const Status& cause) {
    if (ready_.exchange(ready) == ready) return;
    if (!options_.log) return;
    if (ready) {
      options_.log(LogSeverity::kInfo, "etcd fence store: reachable again");
    } else {
      options_.log(LogSeverity::kError, "etcd fence store: not ready: " + cause.ToString());
    }
  }

  void Submit(Task task) {
    {
      std::lock_guard lock(mu_);
      if (!closing_) {
        ++submitted_;
        queue_.push_back(std::move(task));
        work_cv_.notify_one();
        return;
      }
    }
    task(nullptr);
  }

  // A batch may start when no advance transaction is in flight, or when enough advances wait to
  // fill a whole one: group commit without waiting for anything but the round in flight.
  bool BatchStartable() const {
    return !pending_advances_.empty() && !pending_blocked_ &&
           (batches_in_flight_ == 0 || pending_advances_.size() >= MaxTxnKeys());
  }

  bool ReadsStartable() const {
    return !pending_reads_.empty() &&
           (reads_in_flight_ == 0 || pending_reads_.size() >= MaxTxnKeys());
  }

  std::size_t MaxTxnKeys() const { return std::max<std::size_t>(options_.max_txn_ops, 1); }

  // The waiting advances of at most MaxTxnKeys() keys that no batch in flight holds (two
  // transactions on one key would fail each other's compares). Under mu_.
  std::vector<EtcdAdvance> TakeBatch() {
    std::vector<EtcdAdvance> batch;
    batch.reserve(pending_advances_.size());  // `keys` views the batch's keys
    std::unordered_set<std::string_view> keys;
    std::deque<EtcdAdvance> left;
    for (EtcdAdvance& advance : pending_advances_) {
      const bool joins = keys.contains(advance.key) ||
                         (keys.size() < MaxTxnKeys() && !keys_in_flight_.contains(advance.key));
      if (!joins) {
        left.push_back(std::move(advance));
        continue;
      }
      batch.push_back(std::move(advance));
      keys.insert(batch.back().key);
    }
    pending_advances_.swap(left);
    for (const EtcdAdvance& advance : batch) keys_in_flight_.insert(advance.key);
    if (batch.empty()) pending_blocked_ = true;  // until a batch in flight ends
    return batch;
  }

  // Starts every advance batch and read batch that may start: none of them waits for a thread,
  // and each one's end pumps again. Not under mu_ (a closed client calls back at once).
  void Pump() {
    std::vector<std::vector<EtcdAdvance>> batches;
    std::vector<std::vector<EtcdFenceRead>> reads;
    {
      std::lock_guard lock(mu_);
      while (BatchStartable()) {
        std::vector<EtcdAdvance> batch = TakeBatch();
        if (batch.empty()) break;
        ++batches_in_flight_;
        batches.push_back(std::move(batch));
      }
      while (ReadsStartable()) {
        const std::size_t count = std::min(pending_reads_.size(), MaxTxnKeys());
        reads.emplace_back(std::make_move_iterator(pending_reads_.begin()),
                           std::make_move_iterator(pending_reads_.begin() + count));
        pending_reads_.erase(pending_reads_.begin(), pending_reads_.begin() + count);
        ++reads_in_flight_;
      }
    }
    for (std::vector<EtcdAdvance>& batch : batches) {
      std::vector<std::string> keys;
      for (const EtcdAdvance& advance : batch) keys.push_back(advance.key);
      CommitEtcdAdvances(async_, FenceKey(""), seen_, std::move(batch), advance_counters_,
                         [this, keys = std::move(keys)](Status status) {
                           Track(status);
                           {
                             std::lock_guard lock(mu_);
                             for (const std::string& key : keys) keys_in_flight_.erase(key);
                             --batches_in_flight_;
                             pending_blocked_ = false;
                             completed_ += keys.size();
                           }
                           drained_cv_.notify_all();
                           Pump();
                         });
    }
    for (std::vector<EtcdFenceRead>& batch : reads) {
      const std::size_t count = batch.size();
      ReadEtcdFences(async_, FenceKey(""), seen_, std::move(batch), [this, count](Status status) {
        Track(status);
        {
          std::lock_guard lock(mu_);
          --reads_in_flight_;
          completed_ += count;
        }
        drained_cv_.notify_all();
        Pump();
      });
    }
  }

  // Repairs only: advances and reads do not take a thread (Pump).
  void WorkerLoop() {
    EtcdClient client(options_.client, counters_);
    for (;;) {
      Task task;
      {
        std::unique_lock lock(mu_);
        // Work queued before Close() still runs: its callers are owed an answer.
        work_cv_.wait(lock, [this] { return !queue_.empty() || closing_; });
        if (queue_.empty()) return;
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task(&client);
      {
        std::lock_guard lock(mu_);
        ++completed_;
      }
      drained_cv_.notify_all();
    }
  }

  void ProbeLoop() {
    EtcdClient client(options_.client, counters_);
    const std::string probe_key = options_.prefix + "probe";
    std::unique_lock lock(mu_);
    while (!closing_) {
      lock.unlock();
      std::optional<EtcdKeyValue> ignored;
      const Status status = client.Get(probe_key, &ignored);
      SetReady(status.ok(), status);
      lock.lock();
      probe_cv_.wait_for(lock, options_.probe_interval, [this] { return closing_; });
    }
  }

  const EtcdFenceStoreOptions options_;
  const std::shared_ptr<EtcdClientCounters> counters_;
  std::atomic<bool> ready_{false};
  EtcdAdvanceCounters advance_counters_;
  EtcdFenceSeenCache seen_;
  // Advance and read transactions, with their callbacks on its thread; Close() ends it once
  // none is in flight or queued.
  EtcdAsyncClient async_;

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable drained_cv_;
  std::condition_variable probe_cv_;
  std::deque<Task> queue_;
  std::deque<EtcdFenceRead> pending_reads_;
  std::size_t reads_in_flight_ = 0;
  std::deque<EtcdAdvance> pending_advances_;
  // Fence keys of the batches in flight, which the next batch leaves waiting.
  std::unordered_set<std::string> keys_in_flight_;
  std::size_t batches_in_flight_ = 0;
  bool pending_blocked_ = false;  // every waiting advance's key is in flight
  std::uint64_t submitted_ = 0;
  std::uint64_t completed_ = 0;
  bool closing_ = false;

  std::mutex rejections_mu_;
  std::deque<RejectionRecord> rejections_;
  std::uint64_t next_rejection_ = 1;

  std::vector<std::thread> workers_;
  std::thread prober_;
};

Status EtcdFenceStore::Open(const EtcdFenceStoreOptions& options,
                            std::unique_ptr<EtcdFenceStore>* out) {
  if (options.client.endpoints.empty()) {
    return Status::InvalidArgument("the etcd store needs at least one endpoint");
  }
  if (options.prefix.empty()) return Status::InvalidArgument("the etcd store needs a prefix");
  EtcdFenceStoreOptions opened = options;
  if (opened.client.tls && !opened.client.tls_context) {
    std::string error;
    opened.client.tls_context = tls_client::BuildClientContext(*opened.client.tls, &error);
    if (!opened.client.tls_context) return Status::InvalidArgument("etcd tls: " + error);
  }
  out->reset(new EtcdFenceStore(std::make_unique<Impl>(opened)));
  return Status::Ok();
}

EtcdFenceStore::EtcdFenceStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EtcdFenceStore::~EtcdFenceStore() = default;

void EtcdFenceStore::Get(std::string_view key, GetCallback callback) {
  impl_->Get(std::string(key), std::move(callback));
}

void EtcdFenceStore::Advance(std::string_view key, Token token, std::int64_t now_ms,
                             AdvanceCallback callback) {
  impl_->Advance(std::string(key), token, now_ms, std::move(callback));
}

void EtcdFenceStore::Repair(FenceRepairRecord record, RepairCallback callback) {
  impl_->Repair(std::move(record), std::move(callback));
}

Status EtcdFenceStore::ReadRouteBindings(std::map<std::string, std::string>* out) {
  return impl_->ReadRouteBindings(out);
}

Status EtcdFenceStore::WriteRouteBindings(const std::map<std::string, std::string>& bindings) {
  return impl_->WriteRouteBindings(bindings);
}

Status EtcdFenceStore::HasFenceWithPrefix(std::string_view prefix, bool* found) {
  return impl_->HasFenceWithPrefix(prefix, found);
}

std::vector<FenceRepairRecord> EtcdFenceStore::RecentRepairs(std::size_t limit) {
  return impl_->RecentRepairs(limit);
}

void EtcdFenceStore::RecordRejection(RejectionRecord record) {
  impl_->RecordRejection(std::move(record));
}

std::vector<RejectionRecord> EtcdFenceStore::RecentRejections(std::size_t limit) {
  return impl_->RecentRejections(limit);
}

RejectionPage EtcdFenceStore::QueryRejections(const RejectionQuery& query) {
  return impl_->QueryRejections(query);
}

Status EtcdFenceStore::ListFences(std::string_view prefix, std::string_view after,
                                  std::size_t limit, FencePage* page) {
  return impl_->ListFences(prefix, after, limit, page);
}

Status EtcdFenceStore::Flush() { return impl_->Flush(); }
bool EtcdFenceStore::Ready() const { return impl_->Ready(); }
EtcdFenceStore::Stats EtcdFenceStore::stats() const { return impl_->stats(); }
void EtcdFenceStore::Close() { impl_->Close(); }

}  // namespace fencegate::lockstore::etcd
