// The grant of a lock: an acquire is answered at once or waits; a grant is made durable, then
// its fences are raised, then it is answered (or abandoned when the lock left meanwhile).

#include "lockstore/locks/lock_owner.h"
#include "lockstore/locks/lock_table_impl.h"

namespace fencegate::lockstore {
namespace {

using Time = LockClock::Time;
using std::chrono::milliseconds;

}  // namespace

// ---- Acquire ----

std::uint64_t LockTable::Impl::Acquire(std::string_view name, milliseconds ttl, milliseconds wait,
                                       AcquireCallback callback) {
  AcquireResult invalid;
  invalid.kind = AcquireResult::Kind::kInvalid;
  if (!IsValidLockName(name)) {
    invalid.detail = "lock names are 1 to 128 characters from A-Z a-z 0-9 . _ : -";
  } else if (ttl < options_.min_ttl || ttl > options_.max_ttl) {
    invalid.detail = "ttl_ms must be between " + std::to_string(options_.min_ttl.count()) +
                     " and " + std::to_string(options_.max_ttl.count());
  } else if (wait.count() < 0 || wait > options_.max_wait) {
    invalid.detail = "wait_ms must be between 0 and " + std::to_string(options_.max_wait.count());
  }
  if (!invalid.detail.empty()) {
    callback(std::move(invalid));
    return 0;
  }

  Deferred deferred;
  std::uint64_t waiter_id = 0;
  {
    std::lock_guard guard(mu_);
    const Time now = clock_.Now();
    const std::string key(name);
    Status read;
    Lock* found = Fetch(key, &read);
    if (found == nullptr) {
      AcquireResult failed;
      failed.kind = AcquireResult::Kind::kStoreError;
      failed.detail = "reading the lock's record failed: " + read.ToString();
      deferred.push_back(
          [cb = std::move(callback), r = std::move(failed)]() mutable { cb(std::move(r)); });
    } else {
      waiter_id = AcquireLocked(key, *found, ttl, wait, std::move(callback), now, deferred);
    }
    ReportCounts();
  }
  Run(deferred);
  return waiter_id;
}

std::uint64_t LockTable::Impl::AcquireLocked(const std::string& key, Lock& lock, milliseconds ttl,
                                             milliseconds wait, AcquireCallback callback, Time now,
                                             Deferred& deferred) {
  std::uint64_t waiter_id = 0;
  ExpireIfDue(key, lock, now, deferred);
  GrantNext(key, lock, deferred);
  Waiter waiter{0, ttl, now, now + wait, std::move(callback)};
  const bool quarantined = !lock.holder && lock.quarantine_until > now;
  if (!lock.holder && !quarantined && lock.waiters.empty()) {
    StartGrant(key, lock, std::move(waiter), deferred);
  } else {
    if (observer_) deferred.push_back([observer = observer_] { observer->Contended(); });
    AcquireResult refused;
    refused.kind = quarantined ? AcquireResult::Kind::kQuarantined : AcquireResult::Kind::kHeld;
    refused.retry_after = quarantined ? Until(now, lock.quarantine_until)
                          : lock.holder && lock.holder->granted
                              ? Until(now, lock.holder->expires_at)
                              : milliseconds(0);
    if (wait.count() == 0) {
      refused.detail =
          quarantined ? "the lock is in lock-delay after an expired lease" : "the lock is held";
      deferred.push_back([cb = std::move(waiter.callback), r = std::move(refused)]() mutable {
        cb(std::move(r));
      });
    } else if (lock.waiters.size() >= options_.max_waiters_per_lock) {
      refused.kind = AcquireResult::Kind::kBusy;
      refused.detail = "too many waiters on this lock";
      deferred.push_back([cb = std::move(waiter.callback), r = std::move(refused)]() mutable {
        cb(std::move(r));
      });
    } else {
      waiter_id = waiter.id = next_waiter_id_++;
      Schedule(waiter.deadline, key);
      lock.waiters.push_back(std::move(waiter));
      ++waiters_;
    }
  }
  EvictIdle(key, now);
  return waiter_id;
}

void LockTable::Impl::StartGrant(const std::string& name, Lock& lock, Waiter waiter,
                                 Deferred& deferred) {
  AcquireResult failed;
  failed.kind = AcquireResult::Kind::kStoreError;
  std::string owner_token;
  const Status random = NewOwnerToken(&owner_token);
  if (lock.last_token >= kMaxToken) {
    failed.detail = "the lock's fencing tokens are exhausted";
  } else if (!random.ok()) {
    failed.detail = random.ToString();
  }
  if (!failed.detail.empty()) {
    deferred.push_back(
        [cb = std::move(waiter.callback), r = std::move(failed)]() mutable { cb(std::move(r)); });
    return;
  }
  Holder holder;
  holder.owner_hash = OwnerHash(owner_token);
  holder.token = ++lock.last_token;
  holder.ttl = waiter.ttl;
  holder.acquired_at = clock_.Now();
  holder.acquired_at_unix_ms = options_.now_unix_ms ? options_.now_unix_ms() : 0;
  lock.holder = std::move(holder);
  ++holders_;
  // The token is durable before anyone sees it: a crash after this answer cannot reissue it.
  Persist(
      name, lock, /*sync=*/true,
      [self = shared_from_this(), name, token = lock.holder->token, owner = std::move(owner_token),
       waiter = std::make_shared<Waiter>(std::move(waiter))](Status status, std::uint64_t) {
        self->OnGrantDurable(name, token, owner, *waiter, status);
      });
}

void LockTable::Impl::OnGrantDurable(const std::string& name, Token token, std::string owner_token,
                                     const Waiter& waiter, Status status) {
  Deferred deferred;
  std::vector<std::string> keys;
  {
    std::lock_guard guard(mu_);
    auto it = locks_.find(name);
    Lock& lock = it != locks_.end() ? it->second : scratch_;
    if (!lock.holder || lock.holder->token != token) {
      // Forcibly released while being made durable.
      AcquireResult lost;
      lost.kind = AcquireResult::Kind::kHeld;
      lost.detail = "the grant was revoked by a forced release before it was answered";
      deferred.push_back(
          [cb = waiter.callback, r = std::move(lost)]() mutable { cb(std::move(r)); });
    } else if (!status.ok()) {
      AbandonGrant(name, lock, deferred);
      AcquireResult failed;
      failed.kind = AcquireResult::Kind::kStoreError;
      failed.detail = status.ToString();
      deferred.push_back(
          [cb = waiter.callback, r = std::move(failed)]() mutable { cb(std::move(r)); });
    } else if (fencer_ != nullptr && !lock.policy.fence_keys.empty()) {
      keys = lock.policy.fence_keys;
    } else {
      FinishGrant(name, lock, std::move(owner_token), waiter, {}, deferred);
    }
    ReportCounts();
  }
  Run(deferred);
  if (!keys.empty()) {
    fencer_->Raise(name, keys, token,
                   [self = shared_from_this(), name, token, owner = std::move(owner_token),
                    waiter](FenceOutcome outcome) {
                     self->OnFenced(name, token, owner, waiter, std::move(outcome));
                   });
  }
}

void LockTable::Impl::OnFenced(const std::string& name, Token token, std::string owner_token,
                               const Waiter& waiter, FenceOutcome outcome) {
  Deferred deferred;
  {
    std::lock_guard guard(mu_);
    auto it = locks_.find(name);
    Lock& lock = it != locks_.end() ? it->second : scratch_;
    AcquireResult failed;
    if (!lock.holder || lock.holder->token != token) {
      failed.kind = AcquireResult::Kind::kHeld;
      failed.detail = "the grant was revoked by a forced release before it was answered";
    } else if (!outcome.status.ok()) {
      // Fail closed: a holder whose fences are not raised could be overwritten by the last one.
      AbandonGrant(name, lock, deferred);
      failed.kind = AcquireResult::Kind::kStoreError;
      failed.detail = "raising the lock's fences failed: " + outcome.status.ToString();
    } else {
      FinishGrant(name, lock, std::move(owner_token), waiter, std::move(outcome.fences), deferred);
    }
    if (!failed.detail.empty()) {
      deferred.push_back(
          [cb = waiter.callback, r = std::move(failed)]() mutable { cb(std::move(r)); });
    }
    ReportCounts();
  }
  Run(deferred);
}

void LockTable::Impl::FinishGrant(const std::string& name, Lock& lock, std::string owner_token,
                                  const Waiter& waiter, std::vector<FenceRaise> fences,
                                  Deferred& deferred) {
  const Time now = clock_.Now();
  Holder& holder = *lock.holder;
  holder.granted = true;
  if (!fences.empty()) lease_endings_.BindFenceKeys(name, lock.policy.fence_keys);
  // The lease starts at the answer, so the server's lease never ends before the client's view
  // of it (which the client starts when it sent the request).
  holder.acquired_at = now;
  holder.expires_at = now + holder.ttl;
  Schedule(holder.expires_at, name);
  AcquireResult granted;
  granted.kind = AcquireResult::Kind::kGranted;
  granted.owner_token = std::move(owner_token);
  granted.token = holder.token;
  granted.ttl = holder.ttl;
  granted.waited = now - waiter.enqueued;
  granted.fences = std::move(fences);
  if (observer_) {
    deferred.push_back(
        [observer = observer_, waited = granted.waited] { observer->Acquired(waited); });
  }
  deferred.push_back(
      [cb = waiter.callback, r = std::move(granted)]() mutable { cb(std::move(r)); });
}

void LockTable::Impl::AbandonGrant(const std::string& name, Lock& lock, Deferred& deferred) {
  lock.holder.reset();
  --holders_;
  Persist(name, lock, /*sync=*/false, nullptr);
  GrantNext(name, lock, deferred);
}

void LockTable::Impl::GrantNext(const std::string& name, Lock& lock, Deferred& deferred) {
  if (lock.holder || lock.waiters.empty() || lock.quarantine_until > clock_.Now()) return;
  Waiter waiter = std::move(lock.waiters.front());
  lock.waiters.pop_front();
  --waiters_;
  StartGrant(name, lock, std::move(waiter), deferred);
}

}  // namespace fencegate::lockstore
