#include "lockstore/etcd/etcd_advance_batch.h"

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

Status ReadEtcdFences(EtcdClient& client, std::string_view fences_prefix, EtcdFenceSeenCache& cache,
                      std::vector<EtcdFenceRead>& batch) {
  std::vector<EtcdOp> reads;
  for (const EtcdFenceRead& read : batch) {
    reads.push_back({EtcdOp::Kind::kRange, std::string(fences_prefix) + read.key, {}, 0});
  }
  EtcdTxnResult result;
  Status status = client.Txn({}, reads, {}, /*idempotent=*/true, &result);
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
    cache.Remember(reads[i].key, {kv.mod_revision, record});
    batch[i].callback(Status::Ok(), record);
  }
  return status;
}

Status CommitEtcdAdvances(EtcdClient& client, std::string_view fences_prefix,
                          EtcdFenceSeenCache& cache, std::vector<EtcdAdvance>& batch,
                          EtcdAdvanceCounters& counters) {
  counters.requested.fetch_add(batch.size(), std::memory_order_relaxed);
  std::vector<Fold> folds;
  std::vector<std::size_t> fold_of(batch.size());
  std::unordered_map<std::string_view, std::size_t> index;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const EtcdAdvance& advance = batch[i];
    const auto [at, added] = index.try_emplace(advance.key, folds.size());
    if (added) {
      Fold fold;
      fold.etcd_key = std::string(fences_prefix) + advance.key;
      fold.token = advance.token;
      fold.now_ms = advance.now_ms;
      fold.seen = cache.Find(fold.etcd_key);
      folds.push_back(std::move(fold));
    } else if (advance.token > folds[at->second].token) {
      folds[at->second].token = advance.token;
      folds[at->second].now_ms = advance.now_ms;
    }
    fold_of[i] = at->second;
  }

  Status first_error;
  std::vector<Fold*> open;
  for (int round = 0; round < kMaxRounds; ++round) {
    open.clear();
    for (Fold& fold : folds) {
      if (fold.open) open.push_back(&fold);
    }
    if (open.empty()) break;
    std::vector<EtcdCompare> compares;
    std::vector<EtcdOp> puts;
    std::vector<EtcdOp> reads;
    for (Fold* fold : open) {
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
    EtcdTxnResult result;
    Status status = client.Txn(compares, puts, reads, /*idempotent=*/true, &result);
    counters.txns.fetch_add(1, std::memory_order_relaxed);
    if (status.ok() && !result.succeeded && result.ranges.size() != open.size()) {
      status = Status::Corruption("etcd answered a failed advance transaction with " +
                                  std::to_string(result.ranges.size()) + " reads for " +
                                  std::to_string(open.size()) + " keys");
    }
    if (!status.ok()) {
      // Fail closed: whether the transaction committed is unknown, so nothing in it is
      // acknowledged and the next advance of these keys compares afresh.
      for (Fold* fold : open) {
        fold->status = status;
        fold->open = false;
        cache.Forget(fold->etcd_key);
      }
      first_error = status;
      break;
    }
    if (result.succeeded) {
      for (Fold* fold : open) {
        fold->open = false;
        if (!fold->writes) {
          fold->result = fold->seen->record;  // confirmed at this revision
          continue;
        }
        fold->result = {fold->token, fold->now_ms};
        // Every put of one transaction gets the transaction's revision as its mod_revision.
        cache.Remember(fold->etcd_key, {result.revision, fold->result});
        counters.written.fetch_add(1, std::memory_order_relaxed);
      }
      break;
    }
    for (std::size_t k = 0; k < open.size(); ++k) {
      Fold& fold = *open[k];
      const std::optional<EtcdKeyValue>& kv = result.ranges[k];
      if (!kv) {
        if (fold.seen) counters.conflicts.fetch_add(1, std::memory_order_relaxed);
        fold.seen.reset();
        cache.Forget(fold.etcd_key);
        continue;
      }
      FenceRecord current;
      if (!DecodeEtcdFence(kv->value, &current)) {
        fold.status =
            Status::Corruption("etcd fence record '" + fold.etcd_key + "' did not decode");
        fold.open = false;
        cache.Forget(fold.etcd_key);
        continue;
      }
      if (!fold.seen || fold.seen->mod_revision != kv->mod_revision) {
        counters.conflicts.fetch_add(1, std::memory_order_relaxed);
      }
      fold.seen = EtcdFenceSeen{kv->mod_revision, current};
      cache.Remember(fold.etcd_key, *fold.seen);
      if (current.highest >= fold.token) {
        fold.result = current;
        fold.open = false;
      }
    }
  }
  for (Fold& fold : folds) {
    if (fold.open) {
      fold.status = Status::Unavailable("etcd advance of '" + fold.etcd_key + "' kept conflicting");
    }
  }

  for (std::size_t i = 0; i < batch.size(); ++i) {
    const Fold& fold = folds[fold_of[i]];
    batch[i].callback(fold.status, fold.result);
  }
  return first_error;
}

}  // namespace fencegate::lockstore::etcd
