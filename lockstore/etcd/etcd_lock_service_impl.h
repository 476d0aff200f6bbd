#pragma once

// EtcdLockService's implementation, shared by the files that define it: etcd_lock_service.cc
// (threads, renew/release/forced release, views) and etcd_lock_acquire.cc (acquire: the grant
// transaction, and the waiters' queue keys polled until they reach the front). Not for other
// includes.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "lockstore/etcd/etcd_client.h"
#include "lockstore/etcd/etcd_lock_keys.h"
#include "lockstore/etcd/etcd_lock_service.h"

namespace fencegate::lockstore::etcd {

class EtcdLockService::Impl : public std::enable_shared_from_this<EtcdLockService::Impl> {
 public:
  using Clock = std::chrono::steady_clock;
  using milliseconds = std::chrono::milliseconds;
  using Task = std::function<void(EtcdClient&)>;

  Impl(EtcdLockServiceOptions options, LockFencer* fencer, LockObserver* observer)
      : options_(std::move(options)),
        fencer_(fencer),
        observer_(observer),
        counters_(std::make_shared<EtcdClientCounters>()),
        admin_client_(options_.client, counters_) {}

  void Start() {
    for (std::size_t i = 0; i < std::max<std::size_t>(1, options_.threads); ++i) {
      workers_.emplace_back([self = shared_from_this()] { self->Work(); });
    }
    poller_ = std::thread([self = shared_from_this()] { self->PollLoop(); });
  }

  void Close();
  std::uint64_t Acquire(std::string_view name, milliseconds ttl, milliseconds wait,
                        AcquireCallback callback);
  void CancelWait(std::uint64_t waiter_id, const char* detail);
  void CancelAllWaiters();
  void Renew(std::string name, std::string owner_token, RenewCallback callback);
  void Release(std::string name, std::string owner_token, ReleaseCallback callback);
  void ForceRelease(std::string name, std::string operator_id, std::string reason,
                    ForceReleaseCallback callback);
  std::optional<LockView> Inspect(EtcdClient& client, std::string_view name) const;
  std::vector<LockView> List();
  std::vector<LockAuditRecord> RecentAudit(std::size_t limit);
  std::optional<LockView> AdminInspect(std::string_view name) {
    std::lock_guard guard(admin_mu_);
    return Inspect(admin_client_, name);
  }
  // Runs `task` on a worker (or inline once the workers are stopping).
  void Post(Task task);

 private:
  // A grant or forced release whose transaction lost a race (the counter moved, or the read was
  // stale) re-reads and tries again; more than this in a row means something keeps interfering.
  static constexpr int kMaxRaces = 5;

  // An acquire whose key exists in etcd, on its way to a grant.
  struct Claim {
    std::string name;
    std::string key;
    std::int64_t create_revision = 0;
    std::int64_t lease = 0;
    std::string owner_token;
    milliseconds ttl{0};
    Clock::time_point enqueued;
    AcquireCallback callback;
  };
  enum class GrantOutcome { kAnswered, kRace };
  struct Waiter {
    std::string name;
    milliseconds ttl{0};
    Clock::time_point enqueued;
    Clock::time_point deadline;
    AcquireCallback callback;
    bool queued = false;  // its key is in etcd and the poller serves it
    const char* cancelled = nullptr;
    std::string key;
    std::string owner_token;
    std::int64_t lease = 0;
    std::int64_t create_revision = 0;
    Clock::time_point next_keepalive;
  };
  struct Poll {
    Clock::time_point next;
    milliseconds interval{0};
    std::int64_t front = -1;  // create_revision of the queue's front at the last read
  };

  void Work();
  void PollLoop();
  void PollLock(EtcdClient& client, const std::string& name);
  void StartAcquire(EtcdClient& client, const std::string& name, milliseconds ttl,
                    milliseconds wait, std::uint64_t id, AcquireCallback callback);
  // Answers an acquire: the waiter's callback if it is registered (id != 0), else `callback`.
  void Decide(std::uint64_t id, AcquireCallback callback, AcquireResult result);
  GrantOutcome TryGrant(EtcdClient& client, Claim& claim, const EtcdLockState& state);
  void FinishGrant(EtcdClient& client, const Claim& claim, Token token, FenceOutcome outcome);
  void Wake(const std::string& name);
  Status ReadLock(EtcdClient& client, std::string_view name, EtcdLockState* out) const;
  // The queue entry through which `owner_token` holds lock `name` (it points into *state), or
  // nullptr: not the holder, or *status says the lock could not be read.
  const EtcdLockState::Queued* ReadHolder(EtcdClient& client, std::string_view name,
                                          std::string_view owner_token, EtcdLockState* state,
                                          Status* status) const;
  std::int64_t NowUnixMs() const { return options_.now_unix_ms ? options_.now_unix_ms() : 0; }

  const EtcdLockServiceOptions options_;
  LockFencer* const fencer_;
  LockObserver* const observer_;
  std::shared_ptr<EtcdClientCounters> counters_;
  std::mutex admin_mu_;
  EtcdClient admin_client_;  // the admin listener's synchronous reads

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable poll_cv_;
  std::deque<Task> tasks_;
  bool stopping_ = false;
  std::map<std::uint64_t, Waiter> waiters_;  // by id: arrival order on this replica
  std::map<std::string, Poll> polls_;        // locks with waiters queued by this replica
  std::uint64_t next_id_ = 1;
  std::vector<std::thread> workers_;
  std::thread poller_;
};

}  // namespace fencegate::lockstore::etcd
