// EtcdLockService's acquire: a queue key per acquire under the lock's prefix, the grant
// transaction for the front of the queue, and the waiters' keys polled (and their leases kept
// alive) until they reach the front, give up, or are cancelled.

#include <algorithm>

#include "lockstore/etcd/etcd_lock_service_impl.h"
#include "lockstore/locks/lock_owner.h"

namespace fencegate::lockstore::etcd {
namespace {

using std::chrono::milliseconds;

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

}  // namespace

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
    client.RevokeOrLetExpire(lease);
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
      client.RevokeOrLetExpire(lease);
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
      client.RevokeOrLetExpire(lease);
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
  client.RevokeOrLetExpire(lease);
  store_error("the grant kept losing races in etcd; try again");
}

EtcdLockService::Impl::GrantOutcome EtcdLockService::Impl::TryGrant(EtcdClient& client,
                                                                    Claim& claim,
                                                                    const EtcdLockState& state) {
  const auto fail = [&](AcquireResult::Kind kind, std::string detail) {
    client.RevokeOrLetExpire(claim.lease);
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
  // The lease runs its full TTL from the grant, not from when the wait began. Unrenewed it could
  // end before the TTL the holder is told: fail closed, as when the fences cannot be raised.
  std::int64_t left = 0;
  if (const Status renewed = client.LeaseKeepAlive(claim.lease, &left); !renewed.ok()) {
    return fail(AcquireResult::Kind::kStoreError,
                "cannot start the lease at the grant: " + renewed.ToString());
  }
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
    client.RevokeOrLetExpire(claim.lease);
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
      client.RevokeOrLetExpire(waiter.lease);
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
        // A missed renewal is tried again next period; a lease that runs out meanwhile takes
        // the waiter's key with it, which the next poll answers as a lost wait.
        client.LeaseKeepAlive(waiter.lease, &left).IgnoreError();
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

}  // namespace fencegate::lockstore::etcd
