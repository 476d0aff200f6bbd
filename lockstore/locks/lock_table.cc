#include "lockstore/locks/lock_table.h"

#include "lockstore/locks/lock_owner.h"
#include "lockstore/locks/lock_table_impl.h"

namespace fencegate::lockstore {
namespace {

using Time = LockClock::Time;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

}  // namespace

// ---- Bookkeeping ----

LockTable::Impl::Lock* LockTable::Impl::Fetch(std::string_view name, Status* status) {
  auto it = locks_.find(name);
  if (it != locks_.end()) return &it->second;
  std::optional<LockRecord> record;
  *status = persistence_.ReadLock(name, &record);
  if (!status->ok()) return nullptr;
  it = locks_.emplace(std::string(name), Lock{}).first;
  it->second.policy = options_.rules.Resolve(name);
  if (record) Install(it->first, it->second, std::move(*record), clock_.Now());
  return &it->second;
}

void LockTable::Impl::Install(const std::string& name, Lock& lock, LockRecord record, Time now) {
  lock.last_token = record.last_token;
  if (record.state == LockRecord::State::kHeld) {
    // The holder may still be working: it keeps the lock for a full TTL from now.
    Holder holder;
    holder.owner_hash = std::move(record.owner_hash);
    holder.token = record.last_token;
    holder.ttl = milliseconds(record.ttl_ms);
    holder.acquired_at = now;
    holder.expires_at = now + holder.ttl;
    holder.acquired_at_unix_ms = record.acquired_at_unix_ms;
    holder.granted = true;
    lock.holder = std::move(holder);
    ++holders_;
    Schedule(lock.holder->expires_at, name);
  } else if (record.state == LockRecord::State::kQuarantined &&
             lock.policy.quarantine.count() > 0) {
    lock.quarantine_until = now + lock.policy.quarantine;
    Schedule(lock.quarantine_until, name);
  }
}

void LockTable::Impl::EvictIdle(std::string_view keep, Time now) {
  if (locks_.size() <= options_.max_cached_locks) return;
  // Down to 90 %: one scan pays for the next tenth of the cap in new names.
  const std::size_t target = options_.max_cached_locks - options_.max_cached_locks / 10;
  for (auto it = locks_.begin(); it != locks_.end() && locks_.size() > target;) {
    const Lock& lock = it->second;
    const bool idle = !lock.holder && lock.waiters.empty() && lock.quarantine_until <= now &&
                      lock.pending_writes == 0 && it->first != keep;
    if (idle) lease_endings_.Forget(it->first);
    it = idle ? locks_.erase(it) : std::next(it);
  }
}

void LockTable::Impl::WriteDone(const std::string& name) {
  std::lock_guard guard(mu_);
  auto it = locks_.find(name);
  if (it != locks_.end() && it->second.pending_writes > 0) --it->second.pending_writes;
}

void LockTable::Impl::Enqueue(std::string_view name, Lock& lock, LockWrite write,
                              LockPersistence::WriteCallback callback) {
  // Until the write is done the stored record may lag memory: the lock must not be evicted
  // and re-read (it could come back with an older last token).
  ++lock.pending_writes;
  writes_.push_back(
      {std::move(write), [self = shared_from_this(), name = std::string(name),
                          callback = std::move(callback)](Status status, std::uint64_t sequence) {
         self->WriteDone(name);
         if (callback) callback(status, sequence);
       }});
}

LockRecord LockTable::Impl::RecordOf(std::string_view name, const Lock& lock) const {
  LockRecord record;
  record.name = std::string(name);
  record.last_token = lock.last_token;
  if (lock.holder) {
    record.state = LockRecord::State::kHeld;
    record.owner_hash = lock.holder->owner_hash;
    record.ttl_ms = lock.holder->ttl.count();
    record.acquired_at_unix_ms = lock.holder->acquired_at_unix_ms;
  } else if (lock.quarantine_until > clock_.Now()) {
    record.state = LockRecord::State::kQuarantined;
  }
  return record;
}

void LockTable::Impl::Persist(std::string_view name, Lock& lock, bool sync,
                              LockPersistence::WriteCallback callback) {
  Enqueue(name, lock, LockWrite{RecordOf(name, lock), std::nullopt, sync}, std::move(callback));
}

void LockTable::Impl::FlushWrites() {
  std::lock_guard flush(flush_mu_);
  for (;;) {
    PendingWrite write;
    {
      std::lock_guard lock(mu_);
      if (writes_.empty()) return;
      write = std::move(writes_.front());
      writes_.pop_front();
    }
    persistence_.WriteLock(std::move(write.write), std::move(write.callback));
  }
}

void LockTable::Impl::Run(Deferred& deferred) {
  FlushWrites();
  for (auto& fn : deferred) fn();
}

void LockTable::Impl::Schedule(Time when, std::string_view name) {
  deadlines_.emplace(when, std::string(name));
  if (when < wake_) {
    wake_ = when;
    clock_.WakeAt(when);
  }
}

void LockTable::Impl::ReportCounts() {
  // Under the mutex, so the last report is the current count (the observer only stores it).
  if (observer_ != nullptr) observer_->Holders(holders_, waiters_);
}

// ---- Loading ----

Status LockTable::Impl::Load() {
  std::vector<LockRecord> records;
  Status status = persistence_.LoadLocks(&records);
  if (!status.ok()) return status;
  Deferred deferred;
  {
    std::lock_guard lock(mu_);
    const Time now = clock_.Now();
    for (LockRecord& record : records) {
      // Free locks stay in the store until used; only held and delayed ones need memory now.
      if (record.state == LockRecord::State::kFree) continue;
      auto it = locks_.emplace(record.name, Lock{}).first;
      it->second.policy = options_.rules.Resolve(record.name);
      Install(it->first, it->second, std::move(record), now);
    }
    ReportCounts();
  }
  Run(deferred);
  return Status::Ok();
}

// ---- Time ----

void LockTable::Impl::ExpireIfDue(const std::string& name, Lock& lock, Time now,
                                  Deferred& deferred) {
  if (!lock.holder || !lock.holder->granted || now < lock.holder->expires_at) return;
  const nanoseconds held = now - lock.holder->acquired_at;
  lease_endings_.Ended(name, lock.holder->token, StaleReason::kLeaseExpired);
  lock.holder.reset();
  --holders_;
  if (observer_) deferred.push_back([observer = observer_, held] { observer->Expired(held); });
  if (lock.policy.quarantine.count() > 0) {
    lock.quarantine_until = now + lock.policy.quarantine;
    Schedule(lock.quarantine_until, name);
  }
  // Unsynced: if it is lost, the restart treats the lock as held for another TTL (safe).
  Persist(name, lock, /*sync=*/false, nullptr);
}

void LockTable::Impl::ProcessDeadlines(const std::string& name, Lock& lock, Time now,
                                       Deferred& deferred) {
  ExpireIfDue(name, lock, now, deferred);
  for (auto it = lock.waiters.begin(); it != lock.waiters.end();) {
    if (it->deadline > now) {
      ++it;
      continue;
    }
    AcquireResult timed_out;
    const bool quarantined = !lock.holder && lock.quarantine_until > now;
    timed_out.kind = quarantined ? AcquireResult::Kind::kQuarantined : AcquireResult::Kind::kHeld;
    timed_out.detail =
        quarantined ? "still in lock-delay when the wait ended" : "still held when the wait ended";
    timed_out.retry_after = quarantined ? Until(now, lock.quarantine_until)
                            : lock.holder && lock.holder->granted
                                ? Until(now, lock.holder->expires_at)
                                : milliseconds(0);
    deferred.push_back(
        [cb = std::move(it->callback), r = std::move(timed_out)]() mutable { cb(std::move(r)); });
    it = lock.waiters.erase(it);
    --waiters_;
  }
  GrantNext(name, lock, deferred);
}

void LockTable::Impl::OnTimer() {
  Deferred deferred;
  {
    std::lock_guard guard(mu_);
    const Time now = clock_.Now();
    while (!deadlines_.empty() && deadlines_.top().first <= now) {
      const std::string name = deadlines_.top().second;
      deadlines_.pop();
      auto it = locks_.find(name);
      if (it != locks_.end()) ProcessDeadlines(name, it->second, now, deferred);
    }
    wake_ = deadlines_.empty() ? Time::max() : deadlines_.top().first;
    if (wake_ != Time::max()) clock_.WakeAt(wake_);
    ReportCounts();
  }
  Run(deferred);
}

// ---- Renew, release, cancel ----

RenewResult LockTable::Impl::Renew(std::string_view name, std::string_view owner_token) {
  Deferred deferred;
  RenewResult result;
  {
    std::lock_guard guard(mu_);
    auto it = locks_.find(name);
    if (it != locks_.end() && IsWellFormedOwnerToken(owner_token)) {
      Lock& lock = it->second;
      const Time now = clock_.Now();
      // A lease whose end the timer has not processed yet is over all the same.
      ExpireIfDue(it->first, lock, now, deferred);
      GrantNext(it->first, lock, deferred);
      if (lock.holder && lock.holder->granted &&
          lock.holder->owner_hash == OwnerHash(owner_token)) {
        lock.holder->expires_at = now + lock.holder->ttl;
        Schedule(lock.holder->expires_at, it->first);
        result = {true, lock.holder->token, lock.holder->ttl, Status::Ok()};
      }
    }
    if (observer_) {
      deferred.push_back([observer = observer_, renewed = result.renewed] {
        renewed ? observer->Renewed() : observer->RenewalFailed();
      });
    }
    ReportCounts();
  }
  Run(deferred);
  return result;
}

void LockTable::Impl::Release(std::string_view name, std::string_view owner_token,
                              ReleaseCallback callback) {
  Deferred deferred;
  {
    std::lock_guard guard(mu_);
    auto it = locks_.find(name);
    bool released = false;
    if (it != locks_.end() && IsWellFormedOwnerToken(owner_token)) {
      Lock& lock = it->second;
      const Time now = clock_.Now();
      ExpireIfDue(it->first, lock, now, deferred);
      // Compare and delete under one mutex: nothing can slip in between.
      if (lock.holder && lock.holder->granted &&
          lock.holder->owner_hash == OwnerHash(owner_token)) {
        const nanoseconds held = now - lock.holder->acquired_at;
        lease_endings_.Ended(it->first, lock.holder->token, StaleReason::kReleased);
        lock.holder.reset();
        --holders_;
        released = true;
        if (observer_)
          deferred.push_back([observer = observer_, held] { observer->Released(held); });
        Persist(it->first, lock, /*sync=*/true, [callback](Status status, std::uint64_t) {
          callback({true, status});
        });
      }
      GrantNext(it->first, lock, deferred);
    }
    if (!released) deferred.push_back([callback] { callback({false, Status::Ok()}); });
    ReportCounts();
  }
  Run(deferred);
}

void LockTable::Impl::CancelWait(std::string_view name, std::uint64_t waiter_id) {
  Deferred deferred;
  {
    std::lock_guard guard(mu_);
    auto it = locks_.find(name);
    if (it == locks_.end()) return;
    auto& waiters = it->second.waiters;
    for (auto w = waiters.begin(); w != waiters.end(); ++w) {
      if (w->id != waiter_id) continue;
      AcquireResult cancelled;
      cancelled.kind = AcquireResult::Kind::kCancelled;
      cancelled.detail = "the wait was cancelled";
      deferred.push_back(
          [cb = std::move(w->callback), r = std::move(cancelled)]() mutable { cb(std::move(r)); });
      waiters.erase(w);
      --waiters_;
      break;
    }
    ReportCounts();
  }
  Run(deferred);
}

void LockTable::Impl::CancelAllWaiters() {
  Deferred deferred;
  {
    std::lock_guard guard(mu_);
    for (auto& [name, lock] : locks_) {
      for (Waiter& waiter : lock.waiters) {
        AcquireResult cancelled;
        cancelled.kind = AcquireResult::Kind::kCancelled;
        cancelled.detail = "the server is shutting down";
        deferred.push_back([cb = std::move(waiter.callback), r = std::move(cancelled)]() mutable {
          cb(std::move(r));
        });
      }
      waiters_ -= lock.waiters.size();
      lock.waiters.clear();
    }
    ReportCounts();
  }
  Run(deferred);
}

// ---- Forced release ----

void LockTable::Impl::ForceRelease(std::string_view name, std::string operator_id,
                                   std::string reason, ForceReleaseCallback callback) {
  Deferred deferred;
  {
    std::lock_guard guard(mu_);
    auto it = locks_.find(name);
    if (it == locks_.end() || !it->second.holder || it->second.last_token >= kMaxToken) {
      ForceReleaseResult missing;
      missing.status = Status::NotFound("the lock is not held");
      deferred.push_back([callback, r = std::move(missing)] { callback(r); });
    } else {
      Lock& lock = it->second;
      const Time now = clock_.Now();
      const Holder previous = *lock.holder;
      lease_endings_.Ended(it->first, previous.token, StaleReason::kForceReleased);
      lock.holder.reset();
      --holders_;
      // A fresh token for the fences: above the previous holder's, below the next holder's.
      const Token fence_token = ++lock.last_token;
      LockAuditRecord audit;
      audit.at_unix_ms = options_.now_unix_ms ? options_.now_unix_ms() : 0;
      audit.lock = it->first;
      audit.operator_id = std::move(operator_id);
      audit.reason = std::move(reason);
      audit.previous_owner_id = OwnerId(previous.owner_hash);
      audit.previous_token = previous.token;
      audit.fence_token = fence_token;
      if (observer_) {
        deferred.push_back([observer = observer_, held = now - previous.acquired_at] {
          observer->ForceReleased(held);
        });
      }
      std::vector<std::string> keys = fencer_ ? lock.policy.fence_keys : std::vector<std::string>{};
      Enqueue(it->first, lock, LockWrite{RecordOf(it->first, lock), audit, /*sync=*/true},
              [self = shared_from_this(), audit, keys, callback](Status status,
                                                                 std::uint64_t sequence) mutable {
                ForceReleaseResult result;
                result.status = status;
                result.audit = std::move(audit);
                result.audit.sequence = sequence;
                if (status.ok()) self->NoteAuditId(result.audit);
                if (!status.ok() || keys.empty()) {
                  callback(std::move(result));
                  return;
                }
                const std::string lock_name = result.audit.lock;
                const Token token = result.audit.fence_token;
                self->fencer_->Raise(lock_name, keys, token,
                                     [callback, result](FenceOutcome outcome) mutable {
                                       result.status = outcome.status;
                                       result.fences = std::move(outcome.fences);
                                       callback(std::move(result));
                                     });
              });
      GrantNext(it->first, lock, deferred);
    }
    ReportCounts();
  }
  Run(deferred);
}

void LockTable::Impl::NoteAuditId(const LockAuditRecord& audit) {
  std::lock_guard guard(mu_);
  lease_endings_.SetAuditId(audit.lock, audit.previous_token, audit.sequence);
}

// ---- Views ----

LockView LockTable::Impl::ViewOf(const std::string& name, const Lock& lock, Time now) const {
  LockView view;
  view.name = name;
  view.last_token = lock.last_token;
  view.waiters = lock.waiters.size();
  view.quarantine_left = Until(now, lock.quarantine_until);
  if (lock.holder) {
    const Holder& holder = *lock.holder;
    view.held = true;
    view.granting = !holder.granted;
    view.owner_id = OwnerId(holder.owner_hash);
    view.holder_token = holder.token;
    view.ttl = holder.ttl;
    view.expires_in = holder.granted ? Until(now, holder.expires_at) : holder.ttl;
    view.held_for = Until(holder.acquired_at, now);
    view.acquired_at_unix_ms = holder.acquired_at_unix_ms;
  }
  return view;
}

std::optional<LockView> LockTable::Impl::Inspect(std::string_view name) const {
  {
    std::lock_guard guard(mu_);
    auto it = locks_.find(name);
    if (it != locks_.end()) return ViewOf(it->first, it->second, clock_.Now());
  }
  // Not in memory: free. Its record, if any, still tells the last token issued.
  std::optional<LockRecord> record;
  if (!persistence_.ReadLock(name, &record).ok() || !record) return std::nullopt;
  LockView view;
  view.name = std::string(name);
  view.last_token = record->last_token;
  return view;
}

std::vector<LockView> LockTable::Impl::List() const {
  std::lock_guard guard(mu_);
  const Time now = clock_.Now();
  std::vector<LockView> out;
  out.reserve(locks_.size());
  for (const auto& [name, lock] : locks_) out.push_back(ViewOf(name, lock, now));
  return out;
}

// ---- LockTable ----

LockTable::LockTable(LockPersistence& persistence, LockClock& clock, LockFencer* fencer,
                     LockObserver* observer, LockTableOptions options)
    : impl_(std::make_shared<Impl>(persistence, clock, fencer, observer, std::move(options))) {
  clock.SetHandler([weak = std::weak_ptr<Impl>(impl_)] {
    if (auto impl = weak.lock()) impl->OnTimer();
  });
}

LockTable::~LockTable() = default;

Status LockTable::Load() { return impl_->Load(); }
std::uint64_t LockTable::Acquire(std::string_view name, milliseconds ttl, milliseconds wait,
                                 AcquireCallback callback) {
  return impl_->Acquire(name, ttl, wait, std::move(callback));
}
void LockTable::CancelWait(std::string_view name, std::uint64_t waiter_id) {
  impl_->CancelWait(name, waiter_id);
}
RenewResult LockTable::Renew(std::string_view name, std::string_view owner_token) {
  return impl_->Renew(name, owner_token);
}
void LockTable::RenewAsync(std::string_view name, std::string_view owner_token,
                           RenewCallback callback) {
  callback(impl_->Renew(name, owner_token));
}
void LockTable::Release(std::string_view name, std::string_view owner_token,
                        ReleaseCallback callback) {
  impl_->Release(name, owner_token, std::move(callback));
}
void LockTable::ForceRelease(std::string_view name, std::string operator_id, std::string reason,
                             ForceReleaseCallback callback) {
  impl_->ForceRelease(name, std::move(operator_id), std::move(reason), std::move(callback));
}
std::optional<LockView> LockTable::Inspect(std::string_view name) const {
  return impl_->Inspect(name);
}
void LockTable::InspectAsync(std::string_view name, InspectCallback callback) const {
  callback(impl_->Inspect(name));
}
std::vector<LockView> LockTable::List() const { return impl_->List(); }
std::vector<LockAuditRecord> LockTable::RecentAudit(std::size_t limit) const {
  return impl_->RecentAudit(limit);
}
void LockTable::CancelAllWaiters() { impl_->CancelAllWaiters(); }
StaleTokenExplanation LockTable::ExplainStaleToken(std::string_view fence_key, Token token) const {
  return impl_->ExplainStaleToken(fence_key, token);
}

}  // namespace fencegate::lockstore
