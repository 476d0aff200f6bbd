#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "lockstore/etcd/etcd_client.h"
#include "lockstore/locks/lock_fencer.h"
#include "lockstore/locks/lock_rules.h"
#include "lockstore/locks/lock_service.h"

namespace fencegate::lockstore::etcd {

struct EtcdLockServiceOptions {
  EtcdClientOptions client;
  std::string prefix = "/fencegate/";  // the store's prefix: keys under "<prefix>locks/"
  // Threads that run acquires, renewals, releases and state reads, each with its own etcd
  // connection. Waiting acquires do not occupy one: the poller thread serves them.
  std::size_t threads = 4;
  std::chrono::milliseconds min_ttl{100};
  std::chrono::milliseconds max_ttl{std::chrono::hours(1)};
  std::chrono::milliseconds max_wait{std::chrono::minutes(5)};
  std::size_t max_waiters_per_lock = 1000;
  // Lock rules: only fence_keys apply (config refuses lock-delay with etcd).
  LockRules rules;
  // How often a lock with waiters on this replica is re-read: from min, doubling while nothing
  // changes, up to max. A release through this replica re-reads at once.
  std::chrono::milliseconds poll_min{20};
  std::chrono::milliseconds poll_max{250};
  std::function<std::int64_t()> now_unix_ms;
};

// The lock service on etcd: the state of every lock lives in etcd (see etcd_lock_keys.h), so all
// replicas on one prefix share it; this process keeps only its own waiting clients.
//  - Acquire: grant an etcd lease of the lock's TTL (whole seconds, rounded up; etcd raises it to
//    its own minimum, 2 s by default), create "<lock>/q/<lease>" under it. The key with the
//    lowest create_revision is next: it takes the lock in one transaction that checks its key
//    still exists and the counter is unchanged, and writes counter+1 into the counter and into
//    its key. That is the fencing token: per lock, increasing, never reused (the counter has no
//    lease), and above any token a forced release raised the fences to. Then the lock's fence
//    keys are raised to it (through the same admission path as the embedded table).
//  - Waiting: the poller re-reads the lock's keys with bounded backoff (poll_min..poll_max) and
//    keeps the waiters' leases alive. Polling rather than /v3/watch: the client is synchronous
//    request/answer, a watch needs a streaming connection per watched lock, and FIFO order does
//    not depend on when anyone looks (it is the create_revision order).
//  - Renew = lease keepalive, release = delete the key (compare create_revision) and revoke the
//    lease, expiry = the lease ends and etcd deletes the key. Renew and release find the key by
//    the owner token's hash, so they work through any replica.
//  - Forced release: one transaction deletes the holder's key, advances the counter and writes
//    the audit record "<prefix>lock-audit/<lock>/<token>"; then the fences are raised.
// Not built: lock-delay (quarantine) after an expiry, and the holders gauge.
class EtcdLockService final : public LockService {
 public:
  // `fencer` and `observer` may be null and must outlive the service.
  EtcdLockService(EtcdLockServiceOptions options, LockFencer* fencer, LockObserver* observer);
  ~EtcdLockService() override;  // Close()
  EtcdLockService(const EtcdLockService&) = delete;
  EtcdLockService& operator=(const EtcdLockService&) = delete;

  std::uint64_t Acquire(std::string_view name, std::chrono::milliseconds ttl,
                        std::chrono::milliseconds wait, AcquireCallback callback) override;
  void CancelWait(std::string_view name, std::uint64_t waiter_id) override;
  void RenewAsync(std::string_view name, std::string_view owner_token,
                  RenewCallback callback) override;
  void Release(std::string_view name, std::string_view owner_token,
               ReleaseCallback callback) override;
  void ForceRelease(std::string_view name, std::string operator_id, std::string reason,
                    ForceReleaseCallback callback) override;
  void InspectAsync(std::string_view name, InspectCallback callback) const override;
  std::optional<LockView> Inspect(std::string_view name) const override;
  std::vector<LockView> List() const override;
  std::vector<LockAuditRecord> RecentAudit(std::size_t limit) const override;
  void CancelAllWaiters() override;

  // Cancels the waiters (their keys are deleted), runs what is queued, stops the threads.
  // Idempotent.
  void Close();

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace fencegate::lockstore::etcd
