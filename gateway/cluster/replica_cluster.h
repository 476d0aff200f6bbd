#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <boost/json/object.hpp>

#include "gateway/config/config.h"
#include "lockstore/etcd/shard_ownership.h"
#include "lockstore/fence/admission.h"

namespace fencegate::gateway {

// What a replica does with one fenced write (docs/ARCHITECTURE.md "Several replicas").
struct ShardRoute {
  enum class Kind {
    kAdmitHere,  // this replica owns the shard: admission as usual
    kForward,    // proxy to the owner through peer adapter `peer`
    kRefuse,     // nobody can admit it right now (no owner, quarantine, moved): 503
  };
  Kind kind = Kind::kRefuse;
  std::size_t shard = 0;
  std::size_t peer = 0;  // index into peers()
};

// Several replicas on one etcd: shard ownership (lockstore/etcd/shard_ownership), the peers
// forwarded to, and the cluster's metrics. Thread-safe; network threads call Route() and
// StillMine() on every fenced write.
class ReplicaCluster {
 public:
  struct Peer {
    std::string name;
    ListenAddress address;
  };

  // `admission` is told to forget cached fences of a shard before this replica admits writes
  // to it again.
  // On failure a status naming the cause, and `out` stays empty.
  static lockstore::Status Start(const Config& config, lockstore::AdmissionController& admission,
                                 prometheus::Registry& registry,
                                 std::unique_ptr<ReplicaCluster>* out);

  ShardRoute Route(std::string_view fence_key, bool forwarded) const;
  // Self-fencing for a write admitted here: false once `shard` is no longer this replica's
  // (lease not renewed in time, or lost).
  bool StillMine(std::size_t shard) const;
  void CountSelfFenced() const { self_fenced_->Increment(); }
  // A forwarded write ended: the owner answered (`relayed`) or could not be reached in time.
  void CountForward(bool relayed) const {
    (relayed ? forwards_ok_ : forwards_failed_)->Increment();
  }
  // Every other replica, in the order of their peer adapters.
  const std::vector<Peer>& peers() const { return peers_; }
  // This replica holds a lease it can count on (for /readyz).
  bool LeaseValid() const;

  boost::json::object AdminView() const;  // GET /admin/cluster
  void RefreshMetrics();                  // before /metrics renders

 private:
  ReplicaCluster() = default;

  std::unique_ptr<lockstore::etcd::ShardOwnership> ownership_;
  std::vector<Peer> peers_;
  std::string self_;
  prometheus::Gauge* shards_owned_ = nullptr;
  prometheus::Counter* gained_ = nullptr;
  prometheus::Counter* lost_ = nullptr;
  prometheus::Counter* handed_over_ = nullptr;
  prometheus::Counter* lease_losses_ = nullptr;
  prometheus::Counter* self_fenced_ = nullptr;
  prometheus::Counter* forwards_ok_ = nullptr;
  prometheus::Counter* forwards_failed_ = nullptr;
  prometheus::Counter* refused_no_owner_ = nullptr;
  prometheus::Counter* refused_quarantine_ = nullptr;
  prometheus::Counter* refused_moved_ = nullptr;
  lockstore::etcd::ShardOwnership::Stats last_;
};

}  // namespace fencegate::gateway
