#include "lockstore/etcd/shard_ownership.h"

#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

namespace fencegate::lockstore::etcd {
namespace {

using Clock = std::chrono::steady_clock;

// How often ownership is re-read (claims of free shards, quarantine ends).
constexpr auto kPoll = std::chrono::milliseconds(100);

std::uint64_t Fnv1a(std::string_view text) {
  std::uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

// MurmurHash3's 64-bit finalizer: FNV-1a of names that differ in one character ("r1/5",
// "r2/5") differ in a fixed pattern, so without mixing one name wins nearly every shard.
std::uint64_t Mix(std::uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

}  // namespace

class ShardOwnership::Impl {
 public:
  explicit Impl(ShardOwnershipOptions options)
      : options_(std::move(options)),
        client_(options_.client, std::make_shared<EtcdClientCounters>()),
        entries_(options_.shards),
        members_prefix_(options_.prefix + "cluster/members/"),
        owners_prefix_(options_.prefix + "cluster/owners/") {
    const auto ttl = std::chrono::duration_cast<std::chrono::milliseconds>(options_.lease_ttl);
    // The lease ends at the etcd leader no earlier than TTL after it processed the renewal,
    // which was after we sent it; the margin covers clock-rate differences.
    margin_ = ttl / 20 + std::chrono::milliseconds(50);
    thread_ = std::thread([this] { Loop(); });
  }

  ~Impl() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
    if (lease_ != 0) client_.RevokeOrLetExpire(lease_);
  }

  std::size_t ShardOf(std::string_view key) const { return ShardOfKey(key, options_.shards); }

  ShardView Lookup(std::size_t shard) const {
    std::lock_guard lock(mu_);
    return ViewLocked(shard, Clock::now());
  }

  bool Admits(std::size_t shard) const {
    std::lock_guard lock(mu_);
    return entries_[shard].state == ShardView::State::kMine && Clock::now() < valid_until_;
  }

  std::vector<std::string> Members() const {
    std::lock_guard lock(mu_);
    return members_;
  }

  Clock::time_point LeaseValidUntil() const {
    std::lock_guard lock(mu_);
    return valid_until_;
  }

  std::vector<ShardView> Snapshot() const {
    std::lock_guard lock(mu_);
    std::vector<ShardView> out;
    const auto now = Clock::now();
    for (std::size_t shard = 0; shard < entries_.size(); ++shard) {
      out.push_back(ViewLocked(shard, now));
    }
    return out;
  }

  Stats stats() const {
    std::lock_guard lock(mu_);
    return stats_;
  }

  const std::string& name() const { return options_.name; }

 private:
  struct Entry {
    ShardView::State state = ShardView::State::kNone;
    std::string owner;
    Clock::time_point quarantine_until;
  };

  ShardView ViewLocked(std::size_t shard, Clock::time_point now) const {
    const Entry& entry = entries_[shard];
    ShardView view;
    view.state = entry.state;
    view.owner = entry.owner;
    const bool mine =
        entry.state == ShardView::State::kMine || entry.state == ShardView::State::kQuarantine;
    // Self-fencing: past the lease's certain lifetime nothing is ours, whatever the thread
    // has managed to notice.
    if (mine && now >= valid_until_) view.state = ShardView::State::kNone;
    if (view.state == ShardView::State::kPeer) {
      const auto it = options_.peers.find(entry.owner);
      if (it == options_.peers.end()) {
        view.state = ShardView::State::kNone;  // an owner we do not know how to reach
      } else {
        view.address = it->second;
      }
    }
    return view;
  }

  void Log(LogSeverity severity, const std::string& line) {
    if (options_.log) options_.log(severity, line);
  }

  void Loop() {
    Clock::time_point next_renew;
    std::unique_lock lock(mu_);
    while (!stopping_) {
      lock.unlock();
      const Clock::time_point now = Clock::now();
      if (lease_ == 0) {
        Acquire();
        next_renew = Clock::now() + options_.lease_ttl / 3;
      } else if (now >= next_renew && Renew(now)) {
        // A failed renewal is retried at the next poll, not a third of the TTL later.
        next_renew = now + options_.lease_ttl / 3;
      }
      if (lease_ != 0 && Clock::now() >= ValidUntil()) {
        LoseAll("the lease could not be renewed in time");
      }
      if (lease_ != 0) Reconcile();
      lock.lock();
      cv_.wait_for(lock, kPoll, [this] { return stopping_; });
    }
  }

  Clock::time_point ValidUntil() {
    std::lock_guard lock(mu_);
    return valid_until_;
  }

  void Acquire() {
    // A lease this replica gave up on (self-fenced) may still be alive at etcd, holding its
    // shards: end it, so they move as soon as possible (the new owner still quarantines).
    if (stale_lease_ != 0) {
      client_.RevokeOrLetExpire(stale_lease_);
      stale_lease_ = 0;
    }
    const Clock::time_point sent = Clock::now();
    std::int64_t id = 0;
    if (!client_.LeaseGrant(options_.lease_ttl.count(), &id).ok()) return;
    if (!client_.Put(members_prefix_ + options_.name, options_.name, id).ok()) {
      client_.RevokeOrLetExpire(id);
      return;
    }
    lease_ = id;
    // Replicas started together register within this time; claiming earlier would hand every
    // free shard to the first one (ownership is sticky, nothing rebalances later).
    claims_from_ = Clock::now() + options_.lease_ttl;
    std::lock_guard lock(mu_);
    valid_until_ = sent + options_.lease_ttl - margin_;
    Log(LogSeverity::kInfo,
        "cluster: replica " + options_.name + " joined with lease " + std::to_string(id));
  }

  bool Renew(Clock::time_point sent) {
    std::int64_t ttl = 0;
    const Status status = client_.LeaseKeepAlive(lease_, &ttl);
    if (!status.ok()) return false;  // unreachable: Lookup() fences at valid_until_
    if (ttl <= 0) {
      LoseAll("the lease expired");
      return false;
    }
    std::lock_guard lock(mu_);
    valid_until_ = sent + std::chrono::seconds(ttl) - margin_;
    return true;
  }

  void LoseAll(const std::string& why) {
    Log(LogSeverity::kWarning, "cluster: replica " + options_.name + " self-fences: " + why);
    std::lock_guard lock(mu_);
    for (Entry& entry : entries_) {
      if (entry.state == ShardView::State::kMine || entry.state == ShardView::State::kQuarantine) {
        ++stats_.lost;
      }
      entry = Entry{};
    }
    ++stats_.lease_losses;
    valid_until_ = Clock::time_point{};
    stale_lease_ = lease_;
    lease_ = 0;
  }

  // The live member that should own `shard` when it is free (rendezvous hashing).
  static std::string Desired(std::size_t shard, const std::set<std::string>& live) {
    std::string best;
    std::uint64_t best_score = 0;
    for (const std::string& name : live) {
      const std::uint64_t score = Mix(Fnv1a(name + "/" + std::to_string(shard)));
      if (best.empty() || score > best_score) {
        best = name;
        best_score = score;
      }
    }
    return best;
  }

  void Reconcile() {
    std::vector<EtcdKeyValue> members, owners;
    if (!client_.GetPrefix(members_prefix_, &members).ok() ||
        !client_.GetPrefix(owners_prefix_, &owners).ok()) {
      return;
    }
    std::set<std::string> live;
    for (const EtcdKeyValue& kv : members) live.insert(kv.key.substr(members_prefix_.size()));
    {
      std::lock_guard lock(mu_);
      members_.assign(live.begin(), live.end());
    }
    std::vector<const EtcdKeyValue*> by_shard(entries_.size(), nullptr);
    for (const EtcdKeyValue& kv : owners) {
      const std::string suffix = kv.key.substr(owners_prefix_.size());
      std::size_t shard = 0;
      try {
        shard = std::stoul(suffix);
      } catch (const std::exception&) {
        continue;
      }
      if (shard < by_shard.size()) by_shard[shard] = &kv;
    }
    std::vector<std::size_t> gained;
    for (std::size_t shard = 0; shard < entries_.size(); ++shard) {
      const EtcdKeyValue* kv = by_shard[shard];
      if (kv == nullptr && Clock::now() >= claims_from_ && Desired(shard, live) == options_.name) {
        {
          // Its owner is gone: nothing to forward to while this replica claims it.
          std::lock_guard lock(mu_);
          if (entries_[shard].state == ShardView::State::kPeer) entries_[shard] = Entry{};
        }
        Claim(shard);
        continue;
      }
      std::lock_guard lock(mu_);
      Entry& entry = entries_[shard];
      const bool was_mine =
          entry.state == ShardView::State::kMine || entry.state == ShardView::State::kQuarantine;
      if (kv != nullptr && kv->value == options_.name && kv->lease == lease_) {
        if (!was_mine) StartQuarantine(entry);  // a claim whose answer was lost
        if (entry.state == ShardView::State::kQuarantine &&
            Clock::now() >= entry.quarantine_until) {
          gained.push_back(shard);
        }
        continue;
      }
      if (was_mine) {
        ++stats_.lost;
        Log(LogSeverity::kWarning,
            "cluster: replica " + options_.name + " lost shard " + std::to_string(shard));
      }
      entry = Entry{};
      // A claim of this replica under a lease it gave up on counts as nobody's until that
      // lease ends: forwarding to itself would only be refused by the loop guard.
      if (kv != nullptr && kv->value != options_.name) {
        entry.state = ShardView::State::kPeer;
        entry.owner = kv->value;
      }
    }
    for (std::size_t shard : gained) {
      // Before the first admission: forget what this replica cached while others owned it.
      if (options_.on_gained) options_.on_gained(shard);
      std::lock_guard lock(mu_);
      Entry& entry = entries_[shard];
      if (entry.state != ShardView::State::kQuarantine) continue;
      entry.state = ShardView::State::kMine;
      ++stats_.gained;
    }
  }

  void StartQuarantine(Entry& entry) {
    entry.state = ShardView::State::kQuarantine;
    entry.owner = options_.name;
    entry.quarantine_until = Clock::now() + options_.quarantine;
  }

  void Claim(std::size_t shard) {
    const std::string key = owners_prefix_ + std::to_string(shard);
    EtcdTxnResult result;
    const Status status = client_.Txn(
        {{key, EtcdCompare::Target::kCreateRevision, EtcdCompare::Result::kEqual, {}, 0}},
        {{EtcdOp::Kind::kPut, key, options_.name, lease_}}, {}, /*idempotent=*/true, &result);
    if (!status.ok() || !result.succeeded) return;
    std::lock_guard lock(mu_);
    StartQuarantine(entries_[shard]);
    Log(LogSeverity::kInfo, "cluster: replica " + options_.name + " claimed shard " +
                                std::to_string(shard) + ", quarantined for " +
                                std::to_string(options_.quarantine.count()) + " ms");
  }

  const ShardOwnershipOptions options_;
  EtcdClient client_;  // the ownership thread's (and the destructor's) only
  std::chrono::milliseconds margin_{0};
  std::int64_t lease_ = 0;         // the ownership thread's
  Clock::time_point claims_from_;  // the ownership thread's: no claims before (joining)
  std::int64_t stale_lease_ = 0;   // the ownership thread's: given up on, not yet revoked

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::vector<Entry> entries_;
  Clock::time_point valid_until_;
  Stats stats_;
  std::vector<std::string> members_;

  const std::string members_prefix_;
  const std::string owners_prefix_;
  std::thread thread_;
};

std::size_t ShardOfKey(std::string_view fence_key, std::size_t shards) {
  return Fnv1a(fence_key) % shards;
}

Status ShardOwnership::Start(ShardOwnershipOptions options, std::unique_ptr<ShardOwnership>* out) {
  if (options.name.empty()) return Status::InvalidArgument("a replica needs a name");
  if (options.shards == 0) return Status::InvalidArgument("shards must be at least 1");
  if (options.lease_ttl.count() < 1) return Status::InvalidArgument("lease TTL below 1 s");
  out->reset(new ShardOwnership(std::make_unique<Impl>(std::move(options))));
  return Status::Ok();
}

ShardOwnership::ShardOwnership(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ShardOwnership::~ShardOwnership() = default;

std::size_t ShardOwnership::ShardOf(std::string_view fence_key) const {
  return impl_->ShardOf(fence_key);
}
ShardView ShardOwnership::Lookup(std::size_t shard) const { return impl_->Lookup(shard); }
bool ShardOwnership::Admits(std::size_t shard) const { return impl_->Admits(shard); }
std::vector<std::string> ShardOwnership::Members() const { return impl_->Members(); }
std::chrono::steady_clock::time_point ShardOwnership::LeaseValidUntil() const {
  return impl_->LeaseValidUntil();
}
std::vector<ShardView> ShardOwnership::Snapshot() const { return impl_->Snapshot(); }
ShardOwnership::Stats ShardOwnership::stats() const { return impl_->stats(); }
const std::string& ShardOwnership::name() const { return impl_->name(); }

}  // namespace fencegate::lockstore::etcd
