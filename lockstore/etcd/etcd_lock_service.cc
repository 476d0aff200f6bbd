#include "lockstore/etcd/etcd_lock_service.h"

#include <algorithm>

#include "lockstore/etcd/etcd_lock_service_impl.h"
#include "lockstore/locks/lock_owner.h"

namespace fencegate::lockstore::etcd {
namespace {

using std::chrono::milliseconds;

const EtcdLockState::Queued* FindOwner(const EtcdLockState& state, std::string_view owner_token) {
  if (!IsWellFormedOwnerToken(owner_token)) return nullptr;
  const std::string hash = OwnerHash(owner_token);
  // Only the front of the queue is ever granted (a token written into its key).
  if (state.held() && state.queue.front().entry.owner_hash == hash) return &state.queue.front();
  return nullptr;
}

}  // namespace

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
      client.RevokeOrLetExpire(holder.lease);  // the key is gone already; this ends its keepalives
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
