#include "lockstore/etcd/etcd_lock_service.h"

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "lockstore/etcd/etcd_lock_keys.h"
#include "lockstore/locks/lock_owner.h"

namespace fencegate::lockstore::etcd {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A grant or forced release whose transaction lost a race (the counter moved, or the read was
// stale) re-reads and tries again; more than this in a row means something keeps interfering.
constexpr int kMaxRaces = 5;

std::int64_t LeaseSeconds(milliseconds ttl) {
  return std::max<std::int64_t>(1, (ttl.count() + 999) / 1000);
}

// Keep a waiting acquire's lease alive a few times per lease period.
milliseconds KeepalivePeriod(milliseconds ttl) {
  return std::max(milliseconds(200), milliseconds(LeaseSeconds(ttl) * 1000 / 3));
}

AcquireResult Refusal(AcquireResult::Kind kind, std::string detail) {
  AcquireResult result;
  result.kind = kind;
  result.detail = std::move(detail);
  return result;
}

const EtcdLockState::Queued* FindOwner(const EtcdLockState& state, std::string_view owner_token) {
  if (!IsWellFormedOwnerToken(owner_token)) return nullptr;
  const std::string hash = OwnerHash(owner_token);
  // Only the front of the queue is ever granted (a token written into its key).
  if (state.held() && state.queue.front().entry.owner_hash == hash) return &state.queue.front();
  return nullptr;
}

}  // namespace

class EtcdLockService::Impl : public std::enable_shared_from_this<EtcdLockService::Impl> {
 public:
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

// ---- Threads ----

void EtcdLockService::Impl::Post(Task task) {
  {
    std::lock_guard guard(mu_);
    if (!stopping_) {
      tasks_.push_back(std::move(task));
      work_cv_.notify_one();
      return;
    }
  }
  // Shutting down (a fence callback arriving late): run it here with a connection of its own.
  EtcdClient client(options_.client, counters_);
  task(client);
}

void EtcdLockService::Impl::Work() {
  EtcdClient client(options_.client, counters_);
  for (;;) {
    Task task;
    {
      std::unique_lock lock(mu_);
      work_cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task(client);
  }
}

void EtcdLockService::Impl::Close() {
  std::vector<std::thread> workers;
  std::thread poller;
  {
    std::lock_guard guard(mu_);
    if (stopping_) return;
    stopping_ = true;
    for (auto& [id, waiter] : waiters_) waiter.cancelled = "the server is shutting down";
    workers.swap(workers_);
    poller.swap(poller_);
  }
  work_cv_.notify_all();
  poll_cv_.notify_all();
  // Workers finish what is queued (acquires then see their cancellation); the poller deletes
  // the keys of the waiters it still serves and answers them.
  for (std::thread& worker : workers) worker.join();
  if (poller.joinable()) poller.join();
}

void EtcdLockService::Impl::PollLoop() {
  EtcdClient client(options_.client, counters_);
  std::unique_lock lock(mu_);
  for (;;) {
    if (stopping_ && polls_.empty()) return;
    const Clock::time_point now = Clock::now();
    auto due = polls_.end();
    Clock::time_point earliest = Clock::time_point::max();
    for (auto it = polls_.begin(); it != polls_.end(); ++it) {
      if (it->second.next <= now || stopping_) {
        due = it;
        break;
      }
      earliest = std::min(earliest, it->second.next);
    }
    if (due == polls_.end()) {
      if (earliest == Clock::time_point::max()) {
        poll_cv_.wait(lock);
      } else {
        poll_cv_.wait_until(lock, earliest);
      }
      continue;
    }
    const std::string name = due->first;
    due->second.next = Clock::time_point::max();  // until this read is done
    lock.unlock();
    PollLock(client, name);
    lock.lock();
  }
}

void EtcdLockService::Impl::Wake(const std::string& name) {
  std::lock_guard guard(mu_);
  auto it = polls_.find(name);
  if (it == polls_.end()) return;
  it->second.next = Clock::now();
  it->second.interval = options_.poll_min;
  poll_cv_.notify_all();
}

// ---- Acquire ----

std::uint64_t EtcdLockService::Impl::Acquire(std::string_view name, milliseconds ttl,
                                             milliseconds wait, AcquireCallback callback) {
  std::string invalid;
  if (!IsValidLockName(name)) {
    invalid = "lock names are 1 to 128 characters from A-Z a-z 0-9 . _ : -";
  } else if (ttl < options_.min_ttl || ttl > options_.max_ttl) {
    invalid = "ttl_ms must be between " + std::to_string(options_.min_ttl.count()) + " and " +
              std::to_string(options_.max_ttl.count());
  } else if (wait.count() < 0 || wait > options_.max_wait) {
    invalid = "wait_ms must be between 0 and " + std::to_string(options_.max_wait.count());
  }
  if (!invalid.empty()) {
    callback(Refusal(AcquireResult::Kind::kInvalid, std::move(invalid)));
    return 0;
  }
  std::uint64_t id = 0;
  const Clock::time_point now = Clock::now();
  if (wait.count() > 0) {
    std::lock_guard guard(mu_);
    id = next_id_++;
    Waiter& waiter = waiters_[id];
    waiter.name = std::string(name);
    waiter.ttl = ttl;
    waiter.enqueued = now;
    waiter.deadline = now + wait;
    waiter.callback = std::move(callback);
    callback = nullptr;
  }
  Post([self = shared_from_this(), name = std::string(name), ttl, wait, id,
        callback = std::move(callback)](EtcdClient& client) mutable {
    self->StartAcquire(client, name, ttl, wait, id, std::move(callback));
  });
  return id;
}

void EtcdLockService::Impl::Decide(std::uint64_t id, AcquireCallback callback,
                                   AcquireResult result) {
  if (id != 0) {
    std::lock_guard guard(mu_);
    auto it = waiters_.find(id);
    if (it != waiters_.end()) {
      callback = std::move(it->second.callback);
      waiters_.erase(it);
    }
  }
  if (callback) callback(std::move(result));
}

void EtcdLockService::Impl::StartAcquire(EtcdClient& client, const std::string& name,
                                         milliseconds ttl, milliseconds wait, std::uint64_t id,
                                         AcquireCallback callback) {
  const Clock::time_point enqueued = Clock::now();
  const auto store_error = [&](const std::string& what) {
    Decide(id, std::move(callback), Refusal(AcquireResult::Kind::kStoreError, what));
  };
  std::string owner_token;
  Status status = NewOwnerToken(&owner_token);
  std::int64_t lease = 0;
  if (status.ok()) status = client.LeaseGrant(LeaseSeconds(ttl), &lease);
  if (!status.ok()) return store_error(status.ToString());

  // Join the queue: a key of our own under our lease (the lease ID makes it unique).
  const std::string key = EtcdLockQueueKey(options_.prefix, name, lease);
  EtcdLockEntry entry{OwnerHash(owner_token), ttl.count(), 0, 0};
  EtcdTxnResult created;
  status =
      client.Txn({{key, EtcdCompare::Target::kCreateRevision, EtcdCompare::Result::kEqual, "", 0}},
                 {{EtcdOp::Kind::kPut, key, EncodeEtcdLockEntry(entry), lease}}, {},
                 /*idempotent=*/true, &created);
  if (status.ok() && !created.succeeded) status = Status::Unavailable("etcd: lease key exists");
  if (!status.ok()) {
    client.LeaseRevoke(lease);
    return store_error(status.ToString());
  }
  Claim claim{name, key, created.revision, lease, owner_token, ttl, enqueued, nullptr};
  for (int race = 0; race < kMaxRaces; ++race) {
    EtcdLockState state;
    status = ReadLock(client, name, &state);
    std::size_t position = state.queue.size();
    for (std::size_t i = 0; i < state.queue.size(); ++i) {
      if (state.queue[i].key == key) position = i;
    }
    if (status.ok() && position == state.queue.size()) {
      status = Status::Unavailable("the acquire's etcd lease ended before it was queued");
    }
    if (!status.ok()) {
      client.LeaseRevoke(lease);
      return store_error(status.ToString());
    }
    if (position > 0) {
      if (observer_ != nullptr) observer_->Contended();
      const milliseconds retry(state.queue.front().entry.ttl_ms);
      AcquireResult refused = Refusal(AcquireResult::Kind::kHeld, "the lock is held");
      refused.retry_after = retry;
      if (wait.count() > 0 && position > options_.max_waiters_per_lock) {
        refused = Refusal(AcquireResult::Kind::kBusy, "too many waiters on this lock");
      } else if (wait.count() > 0) {
        std::unique_lock guard(mu_);
        auto it = waiters_.find(id);
        if (it != waiters_.end() && stopping_) it->second.cancelled = "the server is shutting down";
        if (it != waiters_.end() && it->second.cancelled == nullptr) {
          Waiter& waiter = it->second;
          waiter.queued = true;
          waiter.key = key;
          waiter.owner_token = owner_token;
          waiter.lease = lease;
          waiter.create_revision = created.revision;
          waiter.next_keepalive = Clock::now() + KeepalivePeriod(ttl);
          Poll& poll = polls_[name];
          poll.next = Clock::now() + options_.poll_min;
          poll.interval = options_.poll_min;
          poll_cv_.notify_all();
          return;
        }
        refused = Refusal(AcquireResult::Kind::kCancelled,
                          it != waiters_.end() ? it->second.cancelled : "the wait was cancelled");
      }
      client.LeaseRevoke(lease);
      return Decide(id, std::move(callback), std::move(refused));
    }
    // First in line: take the waiter's callback (from here on only this thread answers it).
    if (id != 0) {
      std::lock_guard guard(mu_);
      auto it = waiters_.find(id);
      if (it != waiters_.end()) {
        callback = std::move(it->second.callback);
        waiters_.erase(it);
      }
    }
    if (callback) claim.callback = std::move(callback);
    id = 0;
    if (TryGrant(client, claim, state) == GrantOutcome::kAnswered) return;
    callback = std::move(claim.callback);
  }
  client.LeaseRevoke(lease);
  store_error("the grant kept losing races in etcd; try again");
}

EtcdLockService::Impl::GrantOutcome EtcdLockService::Impl::TryGrant(EtcdClient& client,
                                                                    Claim& claim,
                                                                    const EtcdLockState& state) {
  const auto fail = [&](AcquireResult::Kind kind, std::string detail) {
    client.LeaseRevoke(claim.lease);
    claim.callback(Refusal(kind, std::move(detail)));
    return GrantOutcome::kAnswered;
  };
  if (state.last_token >= kMaxToken) {
    return fail(AcquireResult::Kind::kStoreError, "the lock's fencing tokens are exhausted");
  }
  const Token token = state.last_token + 1;
  const EtcdLockEntry entry{OwnerHash(claim.owner_token), claim.ttl.count(), NowUnixMs(), token};
  const std::string counter = EtcdLockCounterKey(options_.prefix, claim.name);
  // The counter and the holder's key change together, and only if the key is still ours and
  // nobody advanced the counter since the read: a token is issued once, to the queue's front.
  EtcdTxnResult result;
  const Status status =
      client.Txn({{claim.key, EtcdCompare::Target::kCreateRevision, EtcdCompare::Result::kEqual, "",
                   claim.create_revision},
                  {counter, EtcdCompare::Target::kModRevision, EtcdCompare::Result::kEqual, "",
                   state.counter_mod_revision}},
                 {{EtcdOp::Kind::kPut, counter, std::to_string(token), 0},
                  {EtcdOp::Kind::kPut, claim.key, EncodeEtcdLockEntry(entry), claim.lease}},
                 {}, /*idempotent=*/true, &result);
  if (!status.ok()) return fail(AcquireResult::Kind::kStoreError, status.ToString());
  if (!result.succeeded) return GrantOutcome::kRace;
  // The lease runs its full TTL from the grant, not from when the wait began.
  std::int64_t left = 0;
  client.LeaseKeepAlive(claim.lease, &left);
  const LockPolicy policy = options_.rules.Resolve(claim.name);
  if (fencer_ == nullptr || policy.fence_keys.empty()) {
    FinishGrant(client, claim, token, {});
    return GrantOutcome::kAnswered;
  }
  fencer_->Raise(
      claim.name, policy.fence_keys, token,
      [self = shared_from_this(), claim, token](FenceOutcome outcome) {
        // The fencer calls back on a store thread: the etcd read goes to a worker.
        self->Post([self, claim, token, outcome = std::move(outcome)](EtcdClient& client) mutable {
          self->FinishGrant(client, claim, token, std::move(outcome));
        });
      });
  return GrantOutcome::kAnswered;
}

void EtcdLockService::Impl::FinishGrant(EtcdClient& client, const Claim& claim, Token token,
                                        FenceOutcome outcome) {
  if (!outcome.status.ok()) {
    // Fail closed: a holder whose fences are not raised could be overwritten by the last one.
    client.LeaseRevoke(claim.lease);
    claim.callback(Refusal(AcquireResult::Kind::kStoreError,
                           "raising the lock's fences failed: " + outcome.status.ToString()));
    Wake(claim.name);
    return;
  }
  std::optional<EtcdKeyValue> current;
  const Status status = client.Get(claim.key, &current);
  EtcdLockEntry entry;
  if (!status.ok()) {
    claim.callback(Refusal(AcquireResult::Kind::kStoreError, status.ToString()));
    return;
  }
  if (!current || !DecodeEtcdLockEntry(current->value, &entry) || entry.token != token) {
    claim.callback(Refusal(AcquireResult::Kind::kHeld,
                           "the grant was revoked by a forced release before it was answered"));
    return;
  }
  AcquireResult granted;
  granted.kind = AcquireResult::Kind::kGranted;
  granted.owner_token = claim.owner_token;
  granted.token = token;
  granted.ttl = claim.ttl;
  granted.waited = Clock::now() - claim.enqueued;
  granted.fences = std::move(outcome.fences);
  if (observer_ != nullptr) observer_->Acquired(granted.waited);
  claim.callback(std::move(granted));
}

// ---- Waiting ----

void EtcdLockService::Impl::PollLock(EtcdClient& client, const std::string& name) {
  EtcdLockState state;
  const Status read = ReadLock(client, name, &state);
  const Clock::time_point now = Clock::now();
  // The waiters of this lock, in arrival order; only this thread erases queued waiters.
  std::vector<std::pair<std::uint64_t, Waiter>> mine;
  {
    std::lock_guard guard(mu_);
    for (const auto& [id, waiter] : waiters_) {
      if (waiter.queued && waiter.name == name) mine.emplace_back(id, waiter);
    }
  }
  std::vector<std::pair<std::uint64_t, Clock::time_point>> kept_alive;
  // Not a structured binding: clang 14 cannot capture those in the lambdas below.
  for (auto& entry : mine) {
    const std::uint64_t id = entry.first;
    Waiter& waiter = entry.second;
    const auto answer = [&](AcquireResult result) {
      client.LeaseRevoke(waiter.lease);
      Decide(id, nullptr, std::move(result));
    };
    const auto position = std::find_if(state.queue.begin(), state.queue.end(),
                                       [&](const auto& q) { return q.key == waiter.key; });
    if (waiter.cancelled != nullptr) {
      answer(Refusal(AcquireResult::Kind::kCancelled, waiter.cancelled));
    } else if (now >= waiter.deadline) {
      AcquireResult refused = Refusal(AcquireResult::Kind::kHeld, "still held when the wait ended");
      if (!state.queue.empty())
        refused.retry_after = milliseconds(state.queue.front().entry.ttl_ms);
      answer(std::move(refused));
    } else if (!read.ok()) {
      continue;  // etcd did not answer: try again at the next poll, until the deadline
    } else if (position == state.queue.end()) {
      answer(Refusal(AcquireResult::Kind::kStoreError,
                     "the wait's etcd lease ended (this replica could not keep it alive)"));
    } else if (position == state.queue.begin()) {
      Claim claim{name,
                  waiter.key,
                  waiter.create_revision,
                  waiter.lease,
                  waiter.owner_token,
                  waiter.ttl,
                  waiter.enqueued,
                  nullptr};
      {
        std::lock_guard guard(mu_);
        auto it = waiters_.find(id);
        claim.callback = std::move(it->second.callback);
        waiters_.erase(it);
      }
      if (TryGrant(client, claim, state) == GrantOutcome::kRace) {
        // Someone moved the counter: back in line, read again at once.
        std::lock_guard guard(mu_);
        Waiter& back = waiters_[id];
        back = waiter;
        back.callback = std::move(claim.callback);
        polls_[name].next = Clock::now();
      }
    } else {
      if (now >= waiter.next_keepalive) {
        std::int64_t left = 0;
        client.LeaseKeepAlive(waiter.lease, &left);
        kept_alive.emplace_back(id, now + KeepalivePeriod(waiter.ttl));
      }
    }
  }
  std::lock_guard guard(mu_);
  for (const auto& [id, next] : kept_alive) {
    if (auto it = waiters_.find(id); it != waiters_.end()) it->second.next_keepalive = next;
  }
  const bool any_left = std::any_of(waiters_.begin(), waiters_.end(), [&](const auto& entry) {
    return entry.second.queued && entry.second.name == name;
  });
  auto poll = polls_.find(name);
  if (poll == polls_.end()) return;
  if (!any_left) {
    polls_.erase(poll);
    return;
  }
  const std::int64_t front = state.queue.empty() ? 0 : state.queue.front().create_revision;
  // Back off while nothing moves; look again soon once the queue advanced.
  poll->second.interval = front != poll->second.front
                              ? options_.poll_min
                              : std::min(options_.poll_max, poll->second.interval * 2);
  poll->second.front = front;
  // A wake-up asked for while this read ran (release, cancel) stays.
  poll->second.next = std::min(poll->second.next, Clock::now() + poll->second.interval);
}

void EtcdLockService::Impl::CancelWait(std::uint64_t waiter_id, const char* detail) {
  std::lock_guard guard(mu_);
  auto it = waiters_.find(waiter_id);
  if (it == waiters_.end()) return;
  it->second.cancelled = detail;
  if (auto poll = polls_.find(it->second.name); poll != polls_.end()) {
    poll->second.next = Clock::now();
  }
  poll_cv_.notify_all();
}

void EtcdLockService::Impl::CancelAllWaiters() {
  std::lock_guard guard(mu_);
  for (auto& [id, waiter] : waiters_) waiter.cancelled = "the server is shutting down";
  for (auto& [name, poll] : polls_) poll.next = Clock::now();
  poll_cv_.notify_all();
}

// ---- Renew, release, forced release ----

Status EtcdLockService::Impl::ReadLock(EtcdClient& client, std::string_view name,
                                       EtcdLockState* out) const {
  std::vector<EtcdKeyValue> kvs;
  const Status status = client.GetPrefix(EtcdLockPrefix(options_.prefix, name), &kvs);
  if (!status.ok()) return status;
  auto locks = GroupEtcdLocks(options_.prefix, kvs);
  auto it = locks.find(std::string(name));
  *out = it != locks.end() ? std::move(it->second) : EtcdLockState{};
  return Status::Ok();
}

const EtcdLockState::Queued* EtcdLockService::Impl::ReadHolder(EtcdClient& client,
                                                               std::string_view name,
                                                               std::string_view owner_token,
                                                               EtcdLockState* state,
                                                               Status* status) const {
  *status = ReadLock(client, name, state);
  return status->ok() ? FindOwner(*state, owner_token) : nullptr;
}

void EtcdLockService::Impl::Renew(std::string name, std::string owner_token,
                                  RenewCallback callback) {
  Post([self = shared_from_this(), name = std::move(name), owner_token = std::move(owner_token),
        callback = std::move(callback)](EtcdClient& client) {
    RenewResult result;
    EtcdLockState state;
    const EtcdLockState::Queued* holder =
        self->ReadHolder(client, name, owner_token, &state, &result.status);
    if (holder != nullptr) {
      std::int64_t left = 0;
      const Status kept = client.LeaseKeepAlive(holder->lease, &left);
      // A lease that already ended is not an error: the lock is lost.
      if (!kept.ok() && kept.code() != Status::Code::kNotFound) result.status = kept;
      if (kept.ok() && left > 0) {
        result = {true, holder->entry.token, milliseconds(holder->entry.ttl_ms), Status::Ok()};
      }
    }
    if (self->observer_ != nullptr && result.status.ok()) {
      result.renewed ? self->observer_->Renewed() : self->observer_->RenewalFailed();
    }
    callback(std::move(result));
  });
}

void EtcdLockService::Impl::Release(std::string name, std::string owner_token,
                                    ReleaseCallback callback) {
  Post([self = shared_from_this(), name = std::move(name), owner_token = std::move(owner_token),
        callback = std::move(callback)](EtcdClient& client) {
    ReleaseResult result;
    EtcdLockState state;
    const EtcdLockState::Queued* holder =
        self->ReadHolder(client, name, owner_token, &state, &result.status);
    if (holder != nullptr) {
      // Revoking the lease deletes the key with it, atomically; the lease is this acquire's
      // own, so nothing else goes.
      const Status revoked = client.LeaseRevoke(holder->lease);
      if (revoked.ok()) {
        result.released = true;
        if (self->observer_ != nullptr) {
          self->observer_->Released(std::chrono::milliseconds(
              std::max<std::int64_t>(0, self->NowUnixMs() - holder->entry.acquired_at_unix_ms)));
        }
      } else if (revoked.code() != Status::Code::kNotFound) {
        result.status = revoked;
      }
      self->Wake(name);
    }
    callback(std::move(result));
  });
}

void EtcdLockService::Impl::ForceRelease(std::string name, std::string operator_id,
                                         std::string reason, ForceReleaseCallback callback) {
  Post([self = shared_from_this(), name = std::move(name), operator_id = std::move(operator_id),
        reason = std::move(reason), callback = std::move(callback)](EtcdClient& client) {
    ForceReleaseResult result;
    for (int race = 0; race < kMaxRaces; ++race) {
      EtcdLockState state;
      result.status = self->ReadLock(client, name, &state);
      if (!result.status.ok()) break;
      if (!state.held() || state.last_token >= kMaxToken) {
        result.status = Status::NotFound("the lock is not held");
        break;
      }
      const EtcdLockState::Queued& holder = state.queue.front();
      LockAuditRecord audit;
      audit.at_unix_ms = self->NowUnixMs();
      audit.lock = name;
      audit.operator_id = operator_id;
      audit.reason = reason;
      audit.previous_owner_id = OwnerId(holder.entry.owner_hash);
      audit.previous_token = holder.entry.token;
      // A fresh token for the fences: above the previous holder's, below the next holder's.
      audit.fence_token = state.last_token + 1;
      const std::string counter = EtcdLockCounterKey(self->options_.prefix, name);
      EtcdTxnResult txn;
      result.status = client.Txn(
          {{holder.key, EtcdCompare::Target::kCreateRevision, EtcdCompare::Result::kEqual, "",
            holder.create_revision},
           {counter, EtcdCompare::Target::kModRevision, EtcdCompare::Result::kEqual, "",
            state.counter_mod_revision}},
          {{EtcdOp::Kind::kDelete, holder.key, "", 0},
           {EtcdOp::Kind::kPut, counter, std::to_string(audit.fence_token), 0},
           {EtcdOp::Kind::kPut, EtcdLockAuditKey(self->options_.prefix, name, audit.fence_token),
            EncodeEtcdLockAudit(audit), 0}},
          {}, /*idempotent=*/true, &txn);
      if (!result.status.ok()) break;
      if (!txn.succeeded) continue;
      audit.sequence = static_cast<std::uint64_t>(txn.revision);
      client.LeaseRevoke(holder.lease);  // the key is gone already; this ends its keepalives
      if (self->observer_ != nullptr) {
        self->observer_->ForceReleased(std::chrono::milliseconds(
            std::max<std::int64_t>(0, audit.at_unix_ms - holder.entry.acquired_at_unix_ms)));
      }
      self->Wake(name);
      result.audit = audit;
      const LockPolicy policy = self->options_.rules.Resolve(name);
      if (self->fencer_ == nullptr || policy.fence_keys.empty()) break;
      self->fencer_->Raise(name, policy.fence_keys, audit.fence_token,
                           [callback, result](FenceOutcome outcome) mutable {
                             result.status = outcome.status;
                             result.fences = std::move(outcome.fences);
                             callback(std::move(result));
                           });
      return;
    }
    if (result.status.ok() && result.audit.fence_token == 0) {
      result.status = Status::Unavailable("the forced release kept losing races in etcd");
    }
    callback(std::move(result));
  });
}

// ---- Views ----

namespace {

LockView ViewOf(EtcdClient& client, const std::string& name, const EtcdLockState& state,
                std::int64_t now_ms) {
  LockView view;
  view.name = name;
  view.last_token = state.last_token;
  if (state.queue.empty()) return view;
  view.waiters = state.queue.size() - 1;
  const EtcdLockState::Queued& front = state.queue.front();
  if (!state.held()) {
    view.granting = true;  // first in line, its grant transaction not (yet) done
    return view;
  }
  view.held = true;
  view.owner_id = OwnerId(front.entry.owner_hash);
  view.holder_token = front.entry.token;
  view.ttl = milliseconds(front.entry.ttl_ms);
  view.acquired_at_unix_ms = front.entry.acquired_at_unix_ms;
  view.held_for = milliseconds(std::max<std::int64_t>(0, now_ms - front.entry.acquired_at_unix_ms));
  std::int64_t left = 0;
  if (client.LeaseTimeToLive(front.lease, &left).ok() && left > 0) {
    view.expires_in = milliseconds(left * 1000);
  }
  return view;
}

}  // namespace

std::optional<LockView> EtcdLockService::Impl::Inspect(EtcdClient& client,
                                                       std::string_view name) const {
  std::vector<EtcdKeyValue> kvs;
  if (!client.GetPrefix(EtcdLockPrefix(options_.prefix, name), &kvs).ok()) return std::nullopt;
  auto locks = GroupEtcdLocks(options_.prefix, kvs);
  auto it = locks.find(std::string(name));
  if (it == locks.end()) return std::nullopt;
  return ViewOf(client, it->first, it->second, NowUnixMs());
}

std::vector<LockView> EtcdLockService::Impl::List() {
  std::lock_guard guard(admin_mu_);
  std::vector<EtcdKeyValue> kvs;
  std::vector<LockView> out;
  if (!admin_client_.GetPrefix(EtcdLocksPrefix(options_.prefix), &kvs).ok()) return out;
  for (const auto& [name, state] : GroupEtcdLocks(options_.prefix, kvs)) {
    out.push_back(ViewOf(admin_client_, name, state, NowUnixMs()));
  }
  return out;
}

std::vector<LockAuditRecord> EtcdLockService::Impl::RecentAudit(std::size_t limit) {
  std::lock_guard guard(admin_mu_);
  std::vector<EtcdKeyValue> kvs;
  std::vector<LockAuditRecord> out;
  if (!admin_client_.GetPrefix(EtcdLockAuditPrefix(options_.prefix), &kvs).ok()) return out;
  for (const EtcdKeyValue& kv : kvs) {
    LockAuditRecord record;
    if (!DecodeEtcdLockAudit(kv.value, &record)) continue;
    record.sequence = static_cast<std::uint64_t>(kv.mod_revision);
    out.push_back(std::move(record));
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.sequence > b.sequence; });
  if (out.size() > limit) out.resize(limit);
  return out;
}

// ---- EtcdLockService ----

EtcdLockService::EtcdLockService(EtcdLockServiceOptions options, LockFencer* fencer,
                                 LockObserver* observer)
    : impl_(std::make_shared<Impl>(std::move(options), fencer, observer)) {
  impl_->Start();
}

EtcdLockService::~EtcdLockService() { Close(); }

void EtcdLockService::Close() { impl_->Close(); }

std::uint64_t EtcdLockService::Acquire(std::string_view name, milliseconds ttl, milliseconds wait,
                                       AcquireCallback callback) {
  return impl_->Acquire(name, ttl, wait, std::move(callback));
}

void EtcdLockService::CancelWait(std::string_view, std::uint64_t waiter_id) {
  impl_->CancelWait(waiter_id, "the wait was cancelled");
}

void EtcdLockService::RenewAsync(std::string_view name, std::string_view owner_token,
                                 RenewCallback callback) {
  impl_->Renew(std::string(name), std::string(owner_token), std::move(callback));
}

void EtcdLockService::Release(std::string_view name, std::string_view owner_token,
                              ReleaseCallback callback) {
  impl_->Release(std::string(name), std::string(owner_token), std::move(callback));
}

void EtcdLockService::ForceRelease(std::string_view name, std::string operator_id,
                                   std::string reason, ForceReleaseCallback callback) {
  impl_->ForceRelease(std::string(name), std::move(operator_id), std::move(reason),
                      std::move(callback));
}

void EtcdLockService::InspectAsync(std::string_view name, InspectCallback callback) const {
  impl_->Post([impl = impl_, name = std::string(name), callback = std::move(callback)](
                  EtcdClient& client) { callback(impl->Inspect(client, name)); });
}

std::optional<LockView> EtcdLockService::Inspect(std::string_view name) const {
  return impl_->AdminInspect(name);
}

std::vector<LockView> EtcdLockService::List() const { return impl_->List(); }

std::vector<LockAuditRecord> EtcdLockService::RecentAudit(std::size_t limit) const {
  return impl_->RecentAudit(limit);
}

void EtcdLockService::CancelAllWaiters() { impl_->CancelAllWaiters(); }

}  // namespace fencegate::lockstore::etcd
