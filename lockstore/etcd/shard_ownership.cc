#include "lockstore/etcd/shard_ownership.h"

#include <condition_variable>
#include <iterator>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

namespace fencegate::lockstore::etcd {
namespace {

using Clock = std::chrono::steady_clock;

// How often ownership is re-read (claims of free shards, quarantine ends, handovers).
constexpr auto kPoll = std::chrono::milliseconds(100);

// How soon a failed lease grant or renewal is tried again.
constexpr auto kRetry = std::chrono::milliseconds(50);

// Shards one replica hands over per round. A join moves about shards/members of them, each
// refused for a quarantine; in steps of two a member view that is wrong for a moment (a member
// that is about to vanish) sends only a few shards through a quarantine for nothing, and a
// round stays two deletes longer at most, so quarantine ends and claims are not held up.
constexpr std::size_t kHandoversPerRound = 2;

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
        lease_client_(options_.client, std::make_shared<EtcdClientCounters>()),
        reconcile_client_(options_.client, std::make_shared<EtcdClientCounters>()),
        entries_(options_.shards),
        members_prefix_(options_.prefix + "cluster/members/"),
        owners_prefix_(options_.prefix + "cluster/owners/") {
    const auto ttl = std::chrono::duration_cast<std::chrono::milliseconds>(options_.lease_ttl);
    // The lease ends at the etcd leader no earlier than TTL after it processed the renewal,
    // which was after we sent it; the margin covers clock-rate differences.
    margin_ = ttl / 20 + std::chrono::milliseconds(50);
    // In milliseconds: a TTL of 2 s divided as seconds would renew without pause.
    renew_every_ = ttl / 3;
    lease_thread_ = std::thread([this] { KeepLease(); });
    reconcile_thread_ = std::thread([this] { ReconcileLoop(); });
  }

  ~Impl() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    reconcile_thread_.join();
    lease_thread_.join();
    if (lease_ != 0) lease_client_.RevokeOrLetExpire(lease_);
    if (stale_lease_ != 0) lease_client_.RevokeOrLetExpire(stale_lease_);
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
    // Handed over: no longer admitted here, its owner key (still ours) not yet deleted.
    bool releasing = false;
  };

  ShardView ViewLocked(std::size_t shard, Clock::time_point now) const {
    const Entry& entry = entries_[shard];
    ShardView view;
    view.state = entry.state;
    view.owner = entry.owner;
    const bool mine =
        entry.state == ShardView::State::kMine || entry.state == ShardView::State::kQuarantine;
    // Self-fencing: past the lease's certain lifetime nothing is ours, whatever the threads
    // have managed to notice.
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

  void Log(LogSeverity severity, const std::string& line) const {
    if (options_.log) options_.log(severity, line);
  }

  // The lease thread: takes a lease and keeps it alive, on its own client and connection, so
  // a renewal never waits behind a read or claim of the reconciling thread (on a busy etcd
  // each of those can take up to operation_timeout, longer than the lease has to live).
  void KeepLease() {
    Clock::time_point next = Clock::now();
    std::unique_lock lock(mu_);
    while (!cv_.wait_until(lock, next, [this] { return stopping_; })) {
      const bool held = lease_ != 0;
      lock.unlock();
      const Clock::time_point attempt = Clock::now();
      const bool ok = held ? Renew() : Acquire();
      lock.lock();
      // Lookup() already fences at valid_until_; this gives the shards up in the state and
      // the stats, and starts over with a new lease.
      if (lease_ != 0 && Clock::now() >= valid_until_) {
        LoseAllLocked("the lease could not be renewed in time");
      }
      // Every TTL/3 from the last send, however long its answer took. A failed attempt already
      // waited for its answer (up to operation_timeout): try again at once, while the lease
      // may still be saved, not a third of the TTL later.
      next = ok ? attempt + renew_every_ : Clock::now() + kRetry;
    }
  }

  bool Acquire() {
    // A lease this replica gave up on (self-fenced) may still be alive at etcd, holding its
    // shards: end it, so they move as soon as possible (the new owner still quarantines).
    if (stale_lease_ != 0) {
      lease_client_.RevokeOrLetExpire(stale_lease_);
      stale_lease_ = 0;
    }
    const Clock::time_point sent = Clock::now();
    std::int64_t id = 0;
    if (!lease_client_.LeaseGrant(options_.lease_ttl.count(), &id).ok()) return false;
    if (!lease_client_.Put(members_prefix_ + options_.name, options_.name, id).ok()) {
      lease_client_.RevokeOrLetExpire(id);
      return false;
    }
    std::lock_guard lock(mu_);
    lease_ = id;
    valid_until_ = sent + options_.lease_ttl - margin_;
    // Replicas started together register within this time; claiming earlier would hand every
    // free shard to the first one, and rebalancing would then move most of them again.
    claims_from_ = Clock::now() + options_.lease_ttl;
    Log(LogSeverity::kInfo,
        "cluster: replica " + options_.name + " joined with lease " + std::to_string(id));
    return true;
  }

  bool Renew() {
    std::int64_t lease = 0;
    {
      std::lock_guard lock(mu_);
      lease = lease_;
    }
    const Clock::time_point sent = Clock::now();
    std::int64_t ttl = 0;
    if (!lease_client_.LeaseKeepAlive(lease, &ttl).ok()) return false;  // Lookup() fences
    std::lock_guard lock(mu_);
    if (ttl <= 0) {
      LoseAllLocked("the lease expired");
      return false;
    }
    valid_until_ = sent + std::chrono::seconds(ttl) - margin_;
    ++stats_.renewals;
    return true;
  }

  // The lease thread's only: it alone changes lease_.
  void LoseAllLocked(const std::string& why) {
    Log(LogSeverity::kWarning, "cluster: replica " + options_.name + " self-fences: " + why);
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

  // The reconciling thread: every kPoll, under the lease it reads at the start of a round (a
  // round whose lease was given up meanwhile changes nothing: the next one starts over).
  void ReconcileLoop() {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      const std::int64_t lease = lease_;
      lock.unlock();
      if (lease != 0) Reconcile(lease);
      lock.lock();
      cv_.wait_for(lock, kPoll, [this] { return stopping_; });
    }
  }

  // The members live for at least a lease TTL, and this replica: the only ones shards are
  // handed over to, so a member that flaps (its lease ends, it joins again) moves nothing.
  std::set<std::string> Settled(const std::set<std::string>& live, Clock::time_point now) {
    for (auto it = live_since_.begin(); it != live_since_.end();) {
      it = live.contains(it->first) ? std::next(it) : live_since_.erase(it);
    }
    std::set<std::string> settled{options_.name};
    for (const std::string& name : live) {
      const auto [it, added] = live_since_.try_emplace(name, now);
      if (now - it->second >= options_.lease_ttl) settled.insert(name);
    }
    return settled;
  }

  void Reconcile(std::int64_t lease) {
    std::vector<EtcdKeyValue> members, owners;
    if (!reconcile_client_.GetPrefix(members_prefix_, &members).ok() ||
        !reconcile_client_.GetPrefix(owners_prefix_, &owners).ok()) {
      return;
    }
    const Clock::time_point now = Clock::now();
    std::set<std::string> live;
    for (const EtcdKeyValue& kv : members) live.insert(kv.key.substr(members_prefix_.size()));
    const std::set<std::string> settled = Settled(live, now);
    Clock::time_point claims_from;
    {
      std::lock_guard lock(mu_);
      if (lease_ != lease) return;
      members_.assign(live.begin(), live.end());
      claims_from = claims_from_;
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
    std::vector<std::size_t> gained, handovers;
    for (std::size_t shard = 0; shard < entries_.size(); ++shard) {
      const EtcdKeyValue* kv = by_shard[shard];
      if (kv == nullptr && now >= claims_from && RendezvousOwner(shard, live) == options_.name) {
        {
          // Its owner is gone: nothing to forward to while this replica claims it.
          std::lock_guard lock(mu_);
          if (lease_ != lease) return;
          Entry& entry = entries_[shard];
          if (entry.state == ShardView::State::kPeer || entry.releasing) entry = Entry{};
        }
        Claim(shard, lease);
        continue;
      }
      std::lock_guard lock(mu_);
      if (lease_ != lease) return;
      Entry& entry = entries_[shard];
      const bool was_mine =
          entry.state == ShardView::State::kMine || entry.state == ShardView::State::kQuarantine;
      if (kv != nullptr && kv->value == options_.name && kv->lease == lease) {
        const bool prefer_other = RendezvousOwner(shard, settled) != options_.name;
        if (entry.releasing) {
          // Its delete failed: try again, or take it back through the quarantine if the member
          // it was meant for is gone.
          if (!prefer_other) {
            StartQuarantine(entry);
          } else if (handovers.size() < kHandoversPerRound) {
            handovers.push_back(shard);
          }
          continue;
        }
        if (!was_mine) StartQuarantine(entry);  // a claim whose answer was lost
        if (entry.state == ShardView::State::kQuarantine && now >= entry.quarantine_until) {
          gained.push_back(shard);
        } else if (entry.state == ShardView::State::kMine && prefer_other &&
                   handovers.size() < kHandoversPerRound) {
          handovers.push_back(shard);
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
      if (lease_ != lease) return;
      Entry& entry = entries_[shard];
      if (entry.state != ShardView::State::kQuarantine) continue;
      entry.state = ShardView::State::kMine;
      ++stats_.gained;
    }
    for (std::size_t shard : handovers) HandOver(shard, lease);
  }

  void StartQuarantine(Entry& entry) {
    entry = Entry{};
    entry.state = ShardView::State::kQuarantine;
    entry.owner = options_.name;
    entry.quarantine_until = Clock::now() + options_.quarantine;
  }

  void Claim(std::size_t shard, std::int64_t lease) {
    const std::string key = owners_prefix_ + std::to_string(shard);
    EtcdTxnResult result;
    const Status status = reconcile_client_.Txn(
        {{key, EtcdCompare::Target::kCreateRevision, EtcdCompare::Result::kEqual, {}, 0}},
        {{EtcdOp::Kind::kPut, key, options_.name, lease}}, {}, /*idempotent=*/true, &result);
    if (!status.ok() || !result.succeeded) return;
    std::lock_guard lock(mu_);
    // Claimed under a lease given up meanwhile: nobody's until it ends (see Reconcile).
    if (lease_ != lease) return;
    StartQuarantine(entries_[shard]);
    Log(LogSeverity::kInfo, "cluster: replica " + options_.name + " claimed shard " +
                                std::to_string(shard) + ", quarantined for " +
                                std::to_string(options_.quarantine.count()) + " ms");
  }

  // Gives `shard` up to the member rendezvous hashing prefers: first no more admissions here
  // (writes already admitted are stopped mid-body by Admits(), and the new owner's quarantine
  // outlasts any still on their way), then the owner key goes, only if it is still this
  // replica's under this lease. The preferred member then claims it as a free shard.
  void HandOver(std::size_t shard, std::int64_t lease) {
    {
      std::lock_guard lock(mu_);
      if (lease_ != lease) return;
      Entry& entry = entries_[shard];
      if (entry.state == ShardView::State::kMine) {
        entry = Entry{};
        entry.releasing = true;
        ++stats_.handed_over;
        Log(LogSeverity::kInfo, "cluster: replica " + options_.name + " hands shard " +
                                    std::to_string(shard) + " over");
      } else if (!entry.releasing) {
        return;
      }
    }
    const std::string key = owners_prefix_ + std::to_string(shard);
    EtcdTxnResult result;
    // A failure leaves the key ours: the shard stays refused here and the next round tries
    // again. Idempotent: applied twice, the second finds the key gone or someone else's.
    (void)reconcile_client_.Txn(
        {{key, EtcdCompare::Target::kValue, EtcdCompare::Result::kEqual, options_.name, 0},
         {key, EtcdCompare::Target::kLease, EtcdCompare::Result::kEqual, {}, lease}},
        {{EtcdOp::Kind::kDelete, key, {}, 0}}, {}, /*idempotent=*/true, &result);
  }

  const ShardOwnershipOptions options_;
  EtcdClient lease_client_;      // the lease thread's (and the destructor's) only
  EtcdClient reconcile_client_;  // the reconciling thread's only
  std::chrono::milliseconds margin_{0};
  std::chrono::milliseconds renew_every_{0};
  std::int64_t stale_lease_ = 0;  // the lease thread's: given up on, not yet revoked
  // The reconciling thread's: since when each live member has been seen live.
  std::map<std::string, Clock::time_point> live_since_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::int64_t lease_ = 0;         // written by the lease thread only
  Clock::time_point claims_from_;  // no claims before (joining)
  std::vector<Entry> entries_;
  Clock::time_point valid_until_;
  Stats stats_;
  std::vector<std::string> members_;

  const std::string members_prefix_;
  const std::string owners_prefix_;
  std::thread lease_thread_;
  std::thread reconcile_thread_;
};

std::size_t ShardOfKey(std::string_view fence_key, std::size_t shards) {
  return Fnv1a(fence_key) % shards;
}

std::string RendezvousOwner(std::size_t shard, const std::set<std::string>& members) {
  std::string best;
  std::uint64_t best_score = 0;
  for (const std::string& name : members) {
    const std::uint64_t score = Mix(Fnv1a(name + "/" + std::to_string(shard)));
    if (best.empty() || score > best_score) {
      best = name;
      best_score = score;
    }
  }
  return best;
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
