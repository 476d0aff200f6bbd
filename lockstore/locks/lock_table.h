#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstore/locks/lock_clock.h"
#include "lockstore/locks/lock_fencer.h"
#include "lockstore/locks/lock_persistence.h"
#include "lockstore/locks/lock_record.h"
#include "lockstore/locks/lock_rules.h"
#include "lockstore/locks/lock_service.h"
#include "lockstore/status.h"
#include "lockstore/tokens/token.h"

namespace fencegate::lockstore {

struct LockTableOptions {
  std::chrono::milliseconds min_ttl{100};
  std::chrono::milliseconds max_ttl{std::chrono::hours(1)};
  std::chrono::milliseconds max_wait{std::chrono::minutes(5)};
  std::size_t max_waiters_per_lock = 1000;
  // Idle locks (free, nobody waiting) kept in memory; beyond this the least useful are dropped
  // and re-read from the store when next used, so memory is bounded by configuration, not by
  // the number of lock names ever used. Held, waited-on and delayed locks always stay.
  std::size_t max_cached_locks = 100000;
  LockRules rules;
  // Wall-clock milliseconds for the informational acquired_at / audit times.
  std::function<std::int64_t()> now_unix_ms;
};

// The named locks: leases with owner tokens and fencing tokens.
//  - A grant issues last_token + 1 and makes it durable (synced) before anyone is told, so a
//    token is never issued twice, restarts included; then raises the lock's fence keys.
//  - Leases run on the injected monotonic clock and start when the grant is answered.
//  - Waiters are served first come, first served; a release or expiry hands the lock to exactly
//    the first waiter.
//  - After a restart (Load), a lock that was held stays held by the same owner for a full TTL
//    from the restart (its owner can renew: the owner hash was persisted); a quarantined lock
//    gets a full lock-delay from the restart. Nobody else can get it while the old holder may
//    still be working.
// Thread-safe. Callbacks run outside the table's mutex, on the caller's thread, a store thread,
// the clock's thread, or the fencer's; callers hop to their own executor.
class LockTable final : public LockService {
 public:
  // `fencer` and `observer` may be null. All references must outlive the table.
  LockTable(LockPersistence& persistence, LockClock& clock, LockFencer* fencer,
            LockObserver* observer, LockTableOptions options);
  ~LockTable() override;
  LockTable(const LockTable&) = delete;
  LockTable& operator=(const LockTable&) = delete;

  // Loads the persisted locks (see the class comment). Call once, before anything else.
  Status Load();

  // Acquires `name` for `ttl`, waiting up to `wait` (0: fail at once). Calls back exactly once.
  // Returns a waiter id for CancelWait (0 when the call was decided without queueing).
  std::uint64_t Acquire(std::string_view name, std::chrono::milliseconds ttl,
                        std::chrono::milliseconds wait, AcquireCallback callback) override;
  // Withdraws a queued acquire (its callback gets kCancelled). No effect once decided.
  void CancelWait(std::string_view name, std::uint64_t waiter_id) override;

  // Extends the lease by its TTL from now, only for the owner and only while the lease is live.
  RenewResult Renew(std::string_view name, std::string_view owner_token);
  // Renew, answered inline (the table renews in memory).
  void RenewAsync(std::string_view name, std::string_view owner_token,
                  RenewCallback callback) override;

  // Frees the lock if `owner_token` holds it; otherwise changes nothing (idempotent).
  void Release(std::string_view name, std::string_view owner_token,
               ReleaseCallback callback) override;

  // Administrative: frees a held lock, issues a new token, raises the lock's fences to it and
  // writes an audit record, all durable before the callback.
  void ForceRelease(std::string_view name, std::string operator_id, std::string reason,
                    ForceReleaseCallback callback) override;

  // One lock (read from the store if it is not in memory; nullopt if never used).
  std::optional<LockView> Inspect(std::string_view name) const override;
  // Inspect, answered inline (a point read of the local store at most).
  void InspectAsync(std::string_view name, InspectCallback callback) const override;
  // The locks in memory: every held, waited-on or delayed one, and recently used free ones.
  std::vector<LockView> List() const override;
  std::vector<LockAuditRecord> RecentAudit(std::size_t limit) const override;
  // Fails every waiter with kCancelled (shutdown).
  void CancelAllWaiters() override;
  // From the lease endings kept in memory (LeaseEndings): lost on restart and when an idle lock
  // leaves memory, then superseded.
  StaleTokenExplanation ExplainStaleToken(std::string_view fence_key, Token token) const override;

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace fencegate::lockstore
