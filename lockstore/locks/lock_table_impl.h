#pragma once

// LockTable's implementation, shared by the files that define it: lock_table.cc (bookkeeping,
// loading, expiry and deadlines, renew/release/cancel, forced release, views) and
// lock_table_grants.cc (acquire and the grant of a lock: durable write, fences, answer). Not
// for other includes.

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockstore/locks/lease_endings.h"
#include "lockstore/locks/lock_table.h"

namespace fencegate::lockstore {

class LockTable::Impl : public std::enable_shared_from_this<LockTable::Impl> {
 public:
  using Time = LockClock::Time;
  using milliseconds = std::chrono::milliseconds;

  Impl(LockPersistence& persistence, LockClock& clock, LockFencer* fencer, LockObserver* observer,
       LockTableOptions options)
      : persistence_(persistence),
        clock_(clock),
        fencer_(fencer),
        observer_(observer),
        options_(std::move(options)) {}

  Status Load();
  std::uint64_t Acquire(std::string_view name, milliseconds ttl, milliseconds wait,
                        AcquireCallback callback);
  void CancelWait(std::string_view name, std::uint64_t waiter_id);
  RenewResult Renew(std::string_view name, std::string_view owner_token);
  void Release(std::string_view name, std::string_view owner_token, ReleaseCallback callback);
  void ForceRelease(std::string_view name, std::string operator_id, std::string reason,
                    ForceReleaseCallback callback);
  std::optional<LockView> Inspect(std::string_view name) const;
  std::vector<LockView> List() const;
  std::vector<LockAuditRecord> RecentAudit(std::size_t limit) const {
    return persistence_.RecentLockAudit(limit);
  }
  void CancelAllWaiters();
  void OnTimer();
  StaleTokenExplanation ExplainStaleToken(std::string_view fence_key, Token token) const {
    std::lock_guard guard(mu_);
    return lease_endings_.Explain(fence_key, token);
  }

 private:
  static milliseconds Until(Time from, Time to) {
    return to > from ? std::chrono::duration_cast<milliseconds>(to - from) : milliseconds(0);
  }

  struct Holder {
    std::string owner_hash;
    Token token = 0;
    milliseconds ttl{0};
    Time acquired_at;
    Time expires_at;
    std::int64_t acquired_at_unix_ms = 0;
    bool granted = false;  // answered; before that the lease does not run
  };
  struct Waiter {
    std::uint64_t id = 0;
    milliseconds ttl{0};
    Time enqueued;
    Time deadline;
    AcquireCallback callback;
  };
  struct Lock {
    Token last_token = 0;
    std::optional<Holder> holder;
    std::deque<Waiter> waiters;
    Time quarantine_until;
    LockPolicy policy;
    std::size_t pending_writes = 0;  // queued or in-flight writes: not evictable until 0
  };
  // Work to do once the mutex is released: callbacks into other components.
  using Deferred = std::vector<std::function<void()>>;
  struct PendingWrite {
    LockWrite write;
    LockPersistence::WriteCallback callback;
  };

  // The in-memory lock, or a fresh one initialised from its stored record (a point read: the
  // lock was evicted, or is used for the first time). Null with `status` set on a store error.
  Lock* Fetch(std::string_view name, Status* status);
  // Sets up `lock` from a stored record as of `now` (start-up, or a fetch).
  void Install(const std::string& name, Lock& lock, LockRecord record, Time now);
  // Drops idle locks (free, nobody waiting, no delay, nothing being written) from memory once
  // there are more than options_.max_cached_locks; their records stay in the store.
  void EvictIdle(std::string_view keep, Time now);
  void WriteDone(const std::string& name);
  void Enqueue(std::string_view name, Lock& lock, LockWrite write,
               LockPersistence::WriteCallback callback);
  LockRecord RecordOf(std::string_view name, const Lock& lock) const;
  void Persist(std::string_view name, Lock& lock, bool sync,
               LockPersistence::WriteCallback callback);
  void FlushWrites();
  void Schedule(Time when, std::string_view name);
  std::uint64_t AcquireLocked(const std::string& key, Lock& lock, milliseconds ttl,
                              milliseconds wait, AcquireCallback callback, Time now,
                              Deferred& deferred);
  void StartGrant(const std::string& name, Lock& lock, Waiter waiter, Deferred& deferred);
  void OnGrantDurable(const std::string& name, Token token, std::string owner_token,
                      const Waiter& waiter, Status status);
  void OnFenced(const std::string& name, Token token, std::string owner_token, const Waiter& waiter,
                FenceOutcome outcome);
  void FinishGrant(const std::string& name, Lock& lock, std::string owner_token,
                   const Waiter& waiter, std::vector<FenceRaise> fences, Deferred& deferred);
  void AbandonGrant(const std::string& name, Lock& lock, Deferred& deferred);
  void GrantNext(const std::string& name, Lock& lock, Deferred& deferred);
  void ProcessDeadlines(const std::string& name, Lock& lock, Time now, Deferred& deferred);
  void ExpireIfDue(const std::string& name, Lock& lock, Time now, Deferred& deferred);
  void ReportCounts();
  // A forced release's audit record is durable: its sequence explains the released token.
  void NoteAuditId(const LockAuditRecord& audit);
  LockView ViewOf(const std::string& name, const Lock& lock, Time now) const;
  void Run(Deferred& deferred);

  LockPersistence& persistence_;
  LockClock& clock_;
  LockFencer* fencer_;
  LockObserver* observer_;
  const LockTableOptions options_;

  mutable std::mutex mu_;
  std::map<std::string, Lock, std::less<>> locks_;
  using Deadline = std::pair<Time, std::string>;
  std::priority_queue<Deadline, std::vector<Deadline>, std::greater<>> deadlines_;
  Time wake_ = Time::max();
  std::uint64_t next_waiter_id_ = 1;
  // Stands in for a lock that left memory under a late callback: it has no holder, so the
  // callback reports the grant as revoked. Never modified.
  Lock scratch_;
  std::size_t holders_ = 0;
  std::size_t waiters_ = 0;
  // How the recent leases of the locks in memory ended, for stale-token refusals.
  LeaseEndings lease_endings_;
  // Writes leave in the order the table made them (a later record of a lock must land after an
  // earlier one); flush_mu_ keeps that order across threads. Recursive: a store that calls back
  // inline may make the table write again from inside FlushWrites.
  std::deque<PendingWrite> writes_;
  std::recursive_mutex flush_mu_;
};

}  // namespace fencegate::lockstore
