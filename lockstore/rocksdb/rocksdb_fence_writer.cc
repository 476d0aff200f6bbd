// The RocksDB fence store's writer thread: it takes what is queued in rounds, gathers a group
// commit, and writes each round's advances, lock records and repairs as one synced batch, then
// a batch of refused writes' audit records. Opening, reads and recovery are in
// rocksdb_fence_store.cc.

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>

#include "lockstore/codec/fence_repair_codec.h"
#include "lockstore/codec/record_codec.h"
#include "lockstore/rocksdb/rocksdb_fence_store_impl.h"
#include "lockstore/rocksdb/rocksdb_status.h"

namespace fencegate::lockstore {
namespace {

rocksdb::Slice ToSlice(std::string_view s) { return {s.data(), s.size()}; }
rocksdb::Slice ToSlice(const EncodedFenceValue& value) { return {value.data(), value.size()}; }

}  // namespace

void RocksDbFenceStore::WriterLoop() {
  std::vector<WriteOp> round;
  std::vector<AdvanceOp*> advances;
  std::vector<LockOp*> locks;
  for (;;) {
    std::span<RejectionRecord> rejections;
    {
      std::unique_lock lock(mu_);
      const auto has_work = [&] { return closing_ || !queue_.empty() || !rejections_.empty(); };
      if (!needs_resume_) {
        work_cv_.wait(lock, has_work);
      } else if (!work_cv_.wait_for(lock, options_.resume_retry, has_work)) {
        // Failed and idle: probe the disk now rather than wait for a write to do it, so the
        // store (and /readyz) recovers even while no client writes.
        lock.unlock();
        TryResume();
        continue;
      }
      // Closing, and everything accepted has been written.
      if (queue_.empty() && rejections_.empty()) return;
      if (!queue_.empty()) TakeRound(lock, round);
      // One batch of audit records per round at most: an advance queued meanwhile waits for
      // that batch, never for the whole backlog of a flood of refusals.
      rejections = rejections_.NextBatch();
    }
    for (WriteOp& op : round) {
      if (auto* advance = std::get_if<AdvanceOp>(&op)) advances.push_back(advance);
      if (auto* lock = std::get_if<LockOp>(&op)) locks.push_back(lock);
    }
    // Lock records first: a grant's token is durable before the fences it raises are requested,
    // and those requests are only made after this round's callbacks.
    if (!locks.empty()) CommitLocks(locks);
    if (!advances.empty()) CommitAdvances(advances);
    if (!rejections.empty()) WriteRejections(rejections);
    // Repairs last: the controller lets none start while an advance of its key is outstanding.
    for (WriteOp& op : round) {
      if (auto* repair = std::get_if<RepairOp>(&op)) CommitRepair(*repair);
    }
    {
      std::lock_guard lock(mu_);
      completed_ += round.size();
      rejections_.Done(rejections.size());
      settled_rejections_ += rejections.size();
    }
    drained_cv_.notify_all();
    round.clear();
    advances.clear();
    locks.clear();
  }
}

void RocksDbFenceStore::TakeRound(std::unique_lock<std::mutex>& lock, std::vector<WriteOp>& round) {
  GatherGroupCommit(lock);
  std::size_t advance_count = 0;
  if (queued_advances_ <= options_.max_batch) {
    advance_count = queued_advances_;
    round.swap(queue_);  // `round` is empty: the queue keeps its old capacity
  } else {
    std::size_t taken = 0;
    while (advance_count < options_.max_batch) {
      if (std::holds_alternative<AdvanceOp>(queue_[taken])) ++advance_count;
      round.push_back(std::move(queue_[taken++]));
    }
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(taken));
  }
  queued_advances_ -= advance_count;
  if (probing_) {
    probe_interval_ =
        advance_count > last_round_advances_ ? 1 : std::min(probe_interval_ * 2, kMaxProbeInterval);
  }
  last_round_advances_ = advance_count;
}

void RocksDbFenceStore::GatherGroupCommit(std::unique_lock<std::mutex>& lock) {
  // Only under concurrency: the previous round shared its fsync, so more advances are coming.
  // Waiting for as many as it carried keeps batches at the level of concurrency without
  // waiting for advances no client is about to send. That alone settles on whatever round
  // size the first rounds happened to have, though, while more clients may be busy elsewhere
  // (reading their response, sending the next request) and would join a round that waited a
  // little longer: probes (see probe_interval_) ask for more. The bound, the last synced
  // write's duration (twice that for a probe), keeps the added latency within one or two fsyncs.
  probing_ = false;
  if (last_round_advances_ < 2 || needs_resume_) return;
  std::size_t target = last_round_advances_;
  if (++rounds_since_probe_ >= probe_interval_) {
    rounds_since_probe_ = 0;
    probing_ = true;
    target += target / 2;
  }
  target = std::min(target, options_.max_batch);
  if (queued_advances_ >= target) return;
  const auto wait = std::min<std::chrono::steady_clock::duration>(
      options_.group_commit_wait, probing_ ? 2 * last_sync_duration_ : last_sync_duration_);
  if (wait <= std::chrono::steady_clock::duration::zero()) return;
  ++stats_.gathers;
  if (probing_) ++stats_.probes;
  gather_target_ = target;
  work_cv_.wait_for(lock, wait, [&] { return closing_ || queued_advances_ >= gather_target_; });
  gather_target_ = 0;
}

void RocksDbFenceStore::CommitAdvances(std::vector<AdvanceOp*>& advances) {
  // Fold the round's advances per key to the highest token requested. Sorting by key then
  // arrival groups a key's advances without a hash table built per round.
  round_keys_.clear();
  for (std::size_t i = 0; i < advances.size(); ++i) round_keys_.emplace_back(advances[i]->key, i);
  std::sort(round_keys_.begin(), round_keys_.end());
  folds_.clear();
  fold_of_.resize(advances.size());
  for (const auto& [key, i] : round_keys_) {
    const AdvanceOp& op = *advances[i];
    if (folds_.empty() || folds_.back().key != key) {
      folds_.push_back({key, op.token, op.now_ms, {}, {}, {}, false});
    } else if (op.token > folds_.back().token) {
      folds_.back().token = op.token;
      folds_.back().now_ms = op.now_ms;
    }
    fold_of_[i] = folds_.size() - 1;
  }

  // The stored value is the truth (this thread is its only writer): never write below it.
  // Known fences need no read; the others are read at once.
  std::vector<std::size_t> unknown;
  std::vector<rocksdb::Slice> keys;
  for (std::size_t i = 0; i < folds_.size(); ++i) {
    const auto known = known_fences_.find(folds_[i].key);
    if (known != known_fences_.end()) {
      folds_[i].current = known->second;
    } else {
      unknown.push_back(i);
      keys.push_back(ToSlice(folds_[i].key));
    }
  }
  if (!unknown.empty()) {
    std::vector<rocksdb::PinnableSlice> values(keys.size());
    std::vector<rocksdb::Status> statuses(keys.size());
    db_->MultiGet(rocksdb::ReadOptions(), fences_cf_, keys.size(), keys.data(), values.data(),
                  statuses.data());
    for (std::size_t u = 0; u < unknown.size(); ++u) {
      Fold& fold = folds_[unknown[u]];
      if (statuses[u].ok()) {
        fold.status = DecodeFenceValue(values[u].ToStringView(), &fold.current);
      } else if (statuses[u].IsNotFound()) {
        fold.current = FloorFor(fold.key).value_or(FenceRecord{});
      } else {
        fold.status = FromRocksDb(statuses[u]);
      }
      if (fold.status.ok()) RememberFence(fold.key, fold.current);
    }
  }

  rocksdb::WriteBatch batch;
  bool any_written = false;
  for (Fold& fold : folds_) {
    if (!fold.status.ok()) continue;
    if (fold.token > fold.current.highest) {
      fold.result = {fold.token, fold.now_ms};
      batch.Put(fences_cf_, ToSlice(fold.key), ToSlice(EncodeFenceValue(fold.result)));
      fold.written = any_written = true;
    } else {
      fold.result = fold.current;
    }
  }

  if (any_written) {
    rocksdb::WriteOptions sync;
    sync.sync = true;
    const auto write_start = std::chrono::steady_clock::now();
    const rocksdb::Status s = Write(sync, &batch);
    last_sync_duration_ = std::chrono::steady_clock::now() - write_start;
    {
      std::lock_guard lock(mu_);
      ++stats_.sync_writes;
      if (!s.ok()) ++stats_.failed_writes;
      stats_.sync_seconds.Observe(Stats::kSyncSecondsBounds,
                                  std::chrono::duration<double>(last_sync_duration_).count());
      stats_.group_commit_advances.Observe(Stats::kGroupCommitBounds,
                                           static_cast<double>(advances.size()));
    }
    if (!s.ok()) {
      known_fences_.clear();
      const Status error = FromRocksDb(s);
      for (Fold& fold : folds_) {
        if (!fold.written) continue;
        fold.status = error;
        fold.result = {};
      }
    } else {
      for (const Fold& fold : folds_) {
        if (fold.written) RememberFence(fold.key, fold.result);
      }
    }
  }

  for (std::size_t i = 0; i < advances.size(); ++i) {
    const Fold& fold = folds_[fold_of_[i]];
    advances[i]->callback(fold.status, fold.result);
  }
}

void RocksDbFenceStore::RememberFence(std::string_view key, const FenceRecord& record) {
  if (known_fences_.size() >= kKnownFencesLimit) known_fences_.clear();
  const auto known = known_fences_.find(key);
  if (known != known_fences_.end()) {
    known->second = record;
  } else {
    known_fences_.emplace(std::string(key), record);
  }
}

void RocksDbFenceStore::CommitRepair(RepairOp& repair) {
  FenceRepairRecord& record = repair.record;
  Status status;
  rocksdb::PinnableSlice value;
  const rocksdb::Status read =
      db_->Get(rocksdb::ReadOptions(), fences_cf_, ToSlice(record.fence_key), &value);
  FenceRecord current;
  if (read.IsNotFound()) {
    status = Status::NotFound("fence key was never fenced");
  } else if (!read.ok()) {
    status = FromRocksDb(read);
  } else {
    status = DecodeFenceValue(value.ToStringView(), &current);
  }
  if (status.ok() && record.new_highest >= current.highest) {
    status = Status::InvalidArgument("a repair only lowers a fence");
  }
  if (status.ok()) {
    record.previous_highest = current.highest;
    record.sequence = next_repair_sequence_;
    rocksdb::WriteBatch batch;
    batch.Put(fences_cf_, ToSlice(record.fence_key),
              ToSlice(EncodeFenceValue({record.new_highest, record.at_ms})));
    batch.Put(repairs_cf_, EncodeSequenceKey(record.sequence), EncodeFenceRepairValue(record));
    rocksdb::WriteOptions sync;
    sync.sync = true;
    status = FromRocksDb(Write(sync, &batch));
    if (status.ok()) {
      ++next_repair_sequence_;
      RememberFence(record.fence_key, {record.new_highest, record.at_ms});
    } else {
      known_fences_.clear();
    }
  }
  repair.callback(status, std::move(record));
}

void RocksDbFenceStore::WriteRejections(std::span<RejectionRecord> rejections) {
  rocksdb::WriteBatch batch;
  for (RejectionRecord& record : rejections) {
    record.sequence = next_rejection_sequence_++;
    batch.Put(rejections_cf_, EncodeSequenceKey(record.sequence), EncodeRejectionValue(record));
    if (record.sequence > options_.rejection_retention) {
      batch.Delete(rejections_cf_,
                   EncodeSequenceKey(record.sequence - options_.rejection_retention));
    }
  }
  // Unsynced: the audit trail rides along with the next synced advance or Flush(). Never
  // throttled: while RocksDB slows writes down (memtables not yet flushed, under a flood of
  // refusals) the batch is dropped rather than holding the writer, and advances, back.
  rocksdb::WriteOptions options;
  options.no_slowdown = true;
  const rocksdb::Status s = Write(options, &batch);
  // Nothing of a refused batch was applied: its sequences are handed out again.
  if (s.IsIncomplete()) next_rejection_sequence_ -= rejections.size();
  std::lock_guard lock(mu_);
  (s.ok() ? stats_.rejections_written : stats_.rejections_dropped) += rejections.size();
}

rocksdb::Status RocksDbFenceStore::Write(const rocksdb::WriteOptions& options,
                                         rocksdb::WriteBatch* batch) {
  rocksdb::Status s;
  // After a failed write RocksDB refuses further writes until resumed; resuming here is what
  // lets a write succeed as soon as the disk is healthy again.
  if (needs_resume_) s = db_->Resume();
  if (s.ok()) s = db_->Write(options, batch);
  // Incomplete: a no_slowdown write refused while RocksDB throttles writes; the disk is fine.
  if (s.IsIncomplete()) return s;
  needs_resume_ = !s.ok();
  SetHealthy(s.ok(), s);
  return s;
}

}  // namespace fencegate::lockstore
