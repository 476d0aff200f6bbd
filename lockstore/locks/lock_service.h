#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstore/locks/lease_endings.h"
#include "lockstore/locks/lock_fencer.h"
#include "lockstore/locks/lock_record.h"
#include "lockstore/status.h"
#include "lockstore/tokens/token.h"

namespace fencegate::lockstore {

// Lock events, for metrics. Called from any thread; outside the table's mutex except Holders(),
// which must therefore only store the numbers (the etcd service does not report Holders: the
// holders are in etcd, not in this process).
class LockObserver {
 public:
  virtual ~LockObserver() = default;
  virtual void Acquired(std::chrono::nanoseconds waited) = 0;
  virtual void Contended() = 0;  // an acquire found the lock held (it waits or fails)
  virtual void Released(std::chrono::nanoseconds held) = 0;
  virtual void Expired(std::chrono::nanoseconds held) = 0;
  virtual void ForceReleased(std::chrono::nanoseconds held) = 0;
  virtual void Renewed() = 0;
  virtual void RenewalFailed() = 0;
  virtual void Holders(std::size_t holders, std::size_t waiters) = 0;
};

struct [[nodiscard]] AcquireResult {
  enum class Kind {
    kGranted,
    kHeld,         // held by someone else (at once, or still at the end of the wait)
    kQuarantined,  // in lock-delay after an expired lease (at once, or still at the end)
    kBusy,         // too many waiters already
    kInvalid,      // bad name or TTL
    kStoreError,   // the grant (or its fences) could not be made durable
    kCancelled,    // CancelWait() or shutdown
  };
  Kind kind = Kind::kInvalid;
  std::string detail;
  // kGranted:
  std::string owner_token;
  Token token = 0;
  std::chrono::milliseconds ttl{0};
  std::chrono::nanoseconds waited{0};
  std::vector<FenceRaise> fences;
  // kHeld / kQuarantined: how long until the current lease or delay ends at the earliest.
  std::chrono::milliseconds retry_after{0};
};

struct [[nodiscard]] RenewResult {
  bool renewed = false;  // false: the lease is lost (expired, released, or someone else's)
  Token token = 0;
  std::chrono::milliseconds ttl{0};
  Status status;  // the store could not be asked (renewed is false then)
};

struct [[nodiscard]] ReleaseResult {
  bool released = false;  // false: the caller did not hold it (already released or lost)
  Status status;          // the durable write failed (the lock is free in memory regardless)
};

struct [[nodiscard]] ForceReleaseResult {
  Status status;  // NotFound: the lock is not held; IOError: the store failed
  LockAuditRecord audit;
  std::vector<FenceRaise> fences;
};

// A snapshot of one lock, for operators. Never carries an owner token.
struct LockView {
  std::string name;
  Token last_token = 0;
  bool held = false;
  bool granting = false;  // being made durable / fenced, not answered yet
  std::string owner_id;
  Token holder_token = 0;
  std::chrono::milliseconds ttl{0};
  std::chrono::milliseconds expires_in{0};
  std::chrono::milliseconds held_for{0};
  std::int64_t acquired_at_unix_ms = 0;
  std::size_t waiters = 0;
  std::chrono::milliseconds quarantine_left{0};
};

// What the gateway's lock API and admin endpoints call: named locks with owner tokens, leases
// and fencing tokens. Two implementations: LockTable (state in this process, persisted in the
// embedded RocksDB store; one replica) and etcd::EtcdLockService (state in etcd; shared by every
// replica on the same etcd prefix). The server picks one by store kind.
// Callbacks run exactly once, from any thread, possibly inline; callers hop to their executor.
// The asynchronous calls never block the caller on I/O; the synchronous ones (Inspect, List,
// RecentAudit) may, and are for the admin listener's thread.
class LockService {
 public:
  using AcquireCallback = std::function<void(AcquireResult)>;
  using RenewCallback = std::function<void(RenewResult)>;
  using ReleaseCallback = std::function<void(ReleaseResult)>;
  using ForceReleaseCallback = std::function<void(ForceReleaseResult)>;
  using InspectCallback = std::function<void(std::optional<LockView>)>;

  virtual ~LockService() = default;

  // Acquires `name` for `ttl`, waiting up to `wait` (0: fail at once). Returns a waiter id for
  // CancelWait (0 when the call was decided without queueing).
  virtual std::uint64_t Acquire(std::string_view name, std::chrono::milliseconds ttl,
                                std::chrono::milliseconds wait, AcquireCallback callback) = 0;
  // Withdraws a queued acquire (its callback gets kCancelled). No effect once decided.
  virtual void CancelWait(std::string_view name, std::uint64_t waiter_id) = 0;
  // Extends the lease by its TTL from now, only for the owner and only while the lease is live.
  virtual void RenewAsync(std::string_view name, std::string_view owner_token,
                          RenewCallback callback) = 0;
  // Frees the lock if `owner_token` holds it; otherwise changes nothing (idempotent).
  virtual void Release(std::string_view name, std::string_view owner_token,
                       ReleaseCallback callback) = 0;
  // Administrative: frees a held lock, issues a new token, raises the lock's fences to it and
  // writes an audit record, all durable before the callback.
  virtual void ForceRelease(std::string_view name, std::string operator_id, std::string reason,
                            ForceReleaseCallback callback) = 0;
  // One lock's view, without blocking the caller (nullopt if never used).
  virtual void InspectAsync(std::string_view name, InspectCallback callback) const = 0;
  // One lock (nullopt if never used). May block.
  virtual std::optional<LockView> Inspect(std::string_view name) const = 0;
  // The locks worth showing an operator. May block.
  virtual std::vector<LockView> List() const = 0;
  // The most recent forced releases, newest first. May block.
  virtual std::vector<LockAuditRecord> RecentAudit(std::size_t limit) const = 0;
  // Fails every waiter of this process with kCancelled (shutdown).
  virtual void CancelAllWaiters() = 0;
  // Why `token`, refused as stale on `fence_key`, is stale: for a token this service granted on
  // a lock whose grants raise that key, how its lease ended; otherwise superseded. In memory,
  // never blocking: called on a network thread, on the refusal path only. A service that keeps
  // no such history (etcd: the leases are etcd's) says superseded.
  virtual StaleTokenExplanation ExplainStaleToken(std::string_view /*fence_key*/,
                                                  Token /*token*/) const {
    return {};
  }
};

}  // namespace fencegate::lockstore
