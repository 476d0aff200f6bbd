#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "lockstore/etcd/etcd_client.h"
#include "lockstore/log_sink.h"
#include "lockstore/status.h"

namespace fencegate::lockstore::etcd {

struct ShardOwnershipOptions {
  EtcdClientOptions client;
  // Keys: "<prefix>cluster/members/<name>" (this replica is live) and
  // "<prefix>cluster/owners/<shard>" (which replica admits writes to the shard), both under this
  // replica's lease.
  std::string prefix = "/fencegate/";
  std::string name;                          // this replica, unique in the cluster
  std::map<std::string, std::string> peers;  // every replica's name -> traffic address
  std::size_t shards = 16;
  std::chrono::seconds lease_ttl{3};
  // How long a newly claimed shard stays closed before this replica admits writes to it: at
  // least the lease TTL plus the longest a write admitted by the previous owner can still be
  // on its way to the backend (docs/ARCHITECTURE.md "Several replicas").
  std::chrono::milliseconds quarantine{6000};
  LogSink log;
  // Called (from the reconciling thread; renewals do not wait on it) when this replica starts
  // admitting writes to `shard`: state cached for the shard's keys may be stale (another
  // replica owned it meanwhile).
  std::function<void(std::size_t shard)> on_gained;
};

// Who admits writes to one shard, as this replica sees it.
struct ShardView {
  enum class State {
    kMine,        // this replica admits them
    kQuarantine,  // this replica owns it but waits out the quarantine: refuse (503)
    kPeer,        // forward to `owner`
    kNone,        // nobody owns it right now (or this replica cannot tell): refuse (503)
  };
  State state = State::kNone;
  std::string owner;    // replica name (kPeer, kMine, kQuarantine)
  std::string address;  // the owner's traffic address (kPeer)
};

// Ownership of fence-key shards by replicas under etcd leases. One thread (with its own etcd
// client, so its renewals never queue behind anything else) takes this replica's lease,
// registers it as a member and keeps the lease alive. A second thread reads members and owners
// every 100 ms, claims the free shards that rendezvous hashing over the live members gives it
// (a compare-and-create under its lease) and hands a shard over when hashing over the members
// live for at least a lease TTL prefers another one (rebalancing on join): it stops admitting
// the shard, then deletes its owner key, and the preferred member claims it like any free
// shard, quarantine included. A shard of a replica whose lease ends moves the same way.
// Self-fencing: a shard counts as this replica's only while the lease is certainly alive, i.e.
// before (send time of the last successful renewal + TTL - margin); Lookup() checks that on
// every call, so a replica cut off from etcd stops admitting writes at that instant even if
// its thread is blocked on a dead connection.
class ShardOwnership {
 public:
  struct Stats {
    std::uint64_t gained = 0;        // shards this replica started admitting
    std::uint64_t lost = 0;          // shards it stopped admitting (lease lost or ended)
    std::uint64_t handed_over = 0;   // shards it gave up to the member hashing prefers
    std::uint64_t lease_losses = 0;  // self-fencings: the lease could not be renewed in time
    std::uint64_t renewals = 0;      // keep-alives etcd answered
  };

  static Status Start(ShardOwnershipOptions options, std::unique_ptr<ShardOwnership>* out);
  ~ShardOwnership();  // revokes the lease (its shards move without waiting for the TTL)

  // Thread-safe and cheap: for network threads, on every fenced write.
  std::size_t ShardOf(std::string_view fence_key) const;
  ShardView Lookup(std::size_t shard) const;
  // Lookup(shard).state == kMine without copying names: checked on every piece of request body.
  bool Admits(std::size_t shard) const;
  std::vector<ShardView> Snapshot() const;   // every shard, for the admin API
  std::vector<std::string> Members() const;  // live replicas as last read from etcd
  // The self-fencing deadline (send time of the last renewal + TTL - margin); in the past when
  // this replica holds no lease it can count on.
  std::chrono::steady_clock::time_point LeaseValidUntil() const;
  Stats stats() const;
  const std::string& name() const;

 private:
  class Impl;
  explicit ShardOwnership(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The shard of a fence key: FNV-1a of the key modulo `shards`, the same on every replica.
std::size_t ShardOfKey(std::string_view fence_key, std::size_t shards);

// The member that should own `shard` (rendezvous hashing): the highest hash of "<name>/<shard>";
// empty when `members` is.
std::string RendezvousOwner(std::size_t shard, const std::set<std::string>& members);

}  // namespace fencegate::lockstore::etcd
