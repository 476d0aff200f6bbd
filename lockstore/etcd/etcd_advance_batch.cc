#include "lockstore/etcd/etcd_advance_batch.h"

#include <memory>
#include <utility>

#include "lockstore/etcd/etcd_fence_store.h"

namespace fencegate::lockstore::etcd {
namespace {

// Each failed round reads every open key and answers those already high enough; a key goes
// round again only when it was written lower (or deleted) meanwhile. The bound only guards
// against a store that keeps changing under us.
constexpr int kMaxRounds = 16;

// The advances of one key in a batch.
struct Fold {
  std::string etcd_key;
  Token token = 0;
  std::int64_t now_ms = 0;
  std::optional<EtcdFenceSeen> seen;  // what the next round compares against; none: absent
  bool writes = false;                // this round puts the token
  bool open = true;
  Status status;
  FenceRecord result;
};

}  // namespace

std::optional<EtcdFenceSeen> EtcdFenceSeenCache::Find(const std::string& etcd_key) const {
  std::lock_guard lock(mu_);
  const auto found = seen_.find(etcd_key);
  if (found == seen_.end()) return std::nullopt;
  return found->second;
}

void EtcdFenceSeenCache::Remember(const std::string& etcd_key, const EtcdFenceSeen& seen) {
  std::lock_guard lock(mu_);
  const auto found = seen_.find(etcd_key);
  if (found != seen_.end()) {
    if (found->second.mod_revision < seen.mod_revision) found->second = seen;
    return;
  }
  if (seen_.size() >= kLimit) seen_.clear();
  seen_.emplace(etcd_key, seen);
}

void EtcdFenceSeenCache::Forget(const std::string& etcd_key) {
  std::lock_guard lock(mu_);
  seen_.erase(etcd_key);
}

void ReadEtcdFences(EtcdAsyncClient& client, std::string fences_prefix, EtcdFenceSeenCache& cache,
                    std::vector<EtcdFenceRead> batch, EtcdBatchDone done) {
  std::vector<EtcdOp> reads;
  for (const EtcdFenceRead& read : batch) {
    reads.push_back({EtcdOp::Kind::kRange, fences_prefix + read.key, {}, 0});
  }
  std::vector<std::string> etcd_keys;
  for (const EtcdOp& read : reads) etcd_keys.push_back(read.key);
  client.Txn(
      {}, reads, {}, /*idempotent=*/true,
      [&cache, batch = std::move(batch), etcd_keys = std::move(etcd_keys), done = std::move(done)](
          Status status, EtcdTxnResult result) mutable {
        if (status.ok() && result.ranges.size() != batch.size()) {
          status = Status::Corruption("etcd answered " + std::to_string(result.ranges.size()) +
                                      " reads for " + std::to_string(batch.size()) + " fences");
        }
        for (std::size_t i = 0; i < batch.size(); ++i) {
          if (!status.ok() || !result.ranges[i]) {
            batch[i].callback(status, std::nullopt);
            continue;
          }
          const EtcdKeyValue& kv = *result.ranges[i];
          FenceRecord record;
          if (!DecodeEtcdFence(kv.value, &record)) {
            batch[i].callback(
                Status::Corruption("etcd fence record of '" + batch[i].key + "' did not decode"),
                std::nullopt);
            continue;
          }
          cache.Remember(etcd_keys[i], {kv.mod_revision, record});
          batch[i].callback(Status::Ok(), record);
        }
        done(status);
      });
}

namespace {

// One batch's rounds, each a transaction whose answer starts the next round or ends the batch.
class AdvanceCommit : public std::enable_shared_from_this<AdvanceCommit> {
 public:
  AdvanceCommit(EtcdAsyncClient& client, std::string_view fences_prefix, EtcdFenceSeenCache& cache,
                std::vector<EtcdAdvance> batch, EtcdAdvanceCounters& counters, EtcdBatchDone done)
      : client_(client),
        cache_(cache),
        counters_(counters),
        batch_(std::move(batch)),
        done_(std::move(done)) {
    counters_.requested.fetch_add(batch_.size(), std::memory_order_relaxed);
    fold_of_.resize(batch_.size());
    std::unordered_map<std::string_view, std::size_t> index;
    for (std::size_t i = 0; i < batch_.size(); ++i) {
      const EtcdAdvance& advance = batch_[i];
      const auto [at, added] = index.try_emplace(advance.key, folds_.size());
      if (added) {
        Fold fold;
        fold.etcd_key = std::string(fences_prefix) + advance.key;
        fold.token = advance.token;
        fold.now_ms = advance.now_ms;
        fold.seen = cache_.Find(fold.etcd_key);
        folds_.push_back(std::move(fold));
      } else if (advance.token > folds_[at->second].token) {
        folds_[at->second].token = advance.token;
        folds_[at->second].now_ms = advance.now_ms;
      }
      fold_of_[i] = at->second;
    }
  }

  void Round() {
    open_.clear();
    for (Fold& fold : folds_) {
      if (fold.open) open_.push_back(&fold);
    }
    if (open_.empty() || round_ == kMaxRounds) return End();
    ++round_;
    std::vector<EtcdCompare> compares;
    std::vector<EtcdOp> puts;
    std::vector<EtcdOp> reads;
    for (Fold* fold : open_) {
      // A missing key fails every value and mod_revision comparison, but has create_revision 0.
      if (fold->seen) {
        compares.push_back({fold->etcd_key,
                            EtcdCompare::Target::kModRevision,
                            EtcdCompare::Result::kEqual,
                            {},
                            fold->seen->mod_revision});
        fold->writes = fold->token > fold->seen->record.highest;
      } else {
        compares.push_back({fold->etcd_key,
                            EtcdCompare::Target::kCreateRevision,
                            EtcdCompare::Result::kEqual,
                            {},
                            0});
        fold->writes = true;
      }
      if (fold->writes) {
        puts.push_back(
            {EtcdOp::Kind::kPut, fold->etcd_key, EncodeEtcdFence(fold->token, fold->now_ms), 0});
      }
      reads.push_back({EtcdOp::Kind::kRange, fold->etcd_key, {}, 0});
    }
    // Idempotent: if an attempt whose answer was lost did commit, the retry's compares fail and
    // its reads find the tokens written, which answers those keys.
    counters_.txns.fetch_add(1, std::memory_order_relaxed);
    client_.Txn(compares, puts, reads, /*idempotent=*/true,
                [self = shared_from_this()](Status status, EtcdTxnResult result) {
                  self->Answered(std::move(status), result);
                });
  }

 private:
  void Answered(Status status, const EtcdTxnResult& result) {
    if (status.ok() && !result.succeeded && result.ranges.size() != open_.size()) {
      status = Status::Corruption("etcd answered a failed advance transaction with " +
                                  std::to_string(result.ranges.size()) + " reads for " +
                                  std::to_string(open_.size()) + " keys");
    }
    if (!status.ok()) {
      // Fail closed: whether the transaction committed is unknown, so nothing in it is
      // acknowledged and the next advance of these keys compares afresh.
      for (Fold* fold : open_) {
        fold->status = status;
        fold->open = false;
        cache_.Forget(fold->etcd_key);
      }
      first_error_ = status;
      return End();
    }
    if (result.succeeded) {
      for (Fold* fold : open_) {
        fold->open = false;
        if (!fold->writes) {
          fold->result = fold->seen->record;  // confirmed at this revision
          continue;
        }
        fold->result = {fold->token, fold->now_ms};
        // Every put of one transaction gets the transaction's revision as its mod_revision.
        cache_.Remember(fold->etcd_key, {result.revision, fold->result});
        counters_.written.fetch_add(1, std::memory_order_relaxed);
      }
      return End();
    }
    for (std::size_t k = 0; k < open_.size(); ++k) {
      Fold& fold = *open_[k];
      const std::optional<EtcdKeyValue>& kv = result.ranges[k];
      if (!kv) {
        if (fold.seen) counters_.conflicts.fetch_add(1, std::memory_order_relaxed);
        fold.seen.reset();
        cache_.Forget(fold.etcd_key);
        continue;
      }
      FenceRecord current;
      if (!DecodeEtcdFence(kv->value, &current)) {
        fold.status =
            Status::Corruption("etcd fence record '" + fold.etcd_key + "' did not decode");
        fold.open = false;
        cache_.Forget(fold.etcd_key);
        continue;
      }
      if (!fold.seen || fold.seen->mod_revision != kv->mod_revision) {
        counters_.conflicts.fetch_add(1, std::memory_order_relaxed);
      }
      fold.seen = EtcdFenceSeen{kv->mod_revision, current};
      cache_.Remember(fold.etcd_key, *fold.seen);
      if (current.highest >= fold.token) {
        fold.result = current;
        fold.open = false;
      }
    }
    Round();
  }

  void End() {
    for (Fold& fold : folds_) {
      if (fold.open) {
        fold.status =
            Status::Unavailable("etcd advance of '" + fold.etcd_key + "' kept conflicting");
      }
    }
    for (std::size_t i = 0; i < batch_.size(); ++i) {
      const Fold& fold = folds_[fold_of_[i]];
      batch_[i].callback(fold.status, fold.result);
    }
    done_(first_error_);
  }

  EtcdAsyncClient& client_;
  EtcdFenceSeenCache& cache_;
  EtcdAdvanceCounters& counters_;
  std::vector<EtcdAdvance> batch_;
  EtcdBatchDone done_;
  std::vector<Fold> folds_;
  std::vector<std::size_t> fold_of_;
  std::vector<Fold*> open_;  // the keys of the round in flight
  int round_ = 0;
  Status first_error_;
};

}  // namespace

void CommitEtcdAdvances(EtcdAsyncClient& client, std::string fences_prefix,
                        EtcdFenceSeenCache& cache, std::vector<EtcdAdvance> batch,
                        EtcdAdvanceCounters& counters, EtcdBatchDone done) {
  std::make_shared<AdvanceCommit>(client, fences_prefix, cache, std::move(batch), counters,
                                  std::move(done))
      ->Round();
}

}  // namespace fencegate::lockstore::etcd
