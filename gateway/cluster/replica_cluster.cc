#include "gateway/cluster/replica_cluster.h"

#include "gateway/config/command_line.h"
#include "gateway/observability/store_log_sink.h"

namespace fencegate::gateway {
namespace json = boost::json;
using lockstore::etcd::ShardView;
using Clock = std::chrono::steady_clock;

namespace {

const char* StateName(ShardView::State state) {
  switch (state) {
    case ShardView::State::kMine:
      return "owned";
    case ShardView::State::kQuarantine:
      return "quarantine";
    case ShardView::State::kPeer:
      return "peer";
    case ShardView::State::kNone:
      break;
  }
  return "unowned";
}

}  // namespace

lockstore::Status ReplicaCluster::Start(const Config& config,
                                        lockstore::AdmissionController& admission,
                                        prometheus::Registry& registry,
                                        std::unique_ptr<ReplicaCluster>* out) {
  const ClusterConfig& cluster_config = config.cluster;
  std::unique_ptr<ReplicaCluster> cluster(new ReplicaCluster());
  cluster->self_ = cluster_config.name;
  lockstore::etcd::ShardOwnershipOptions options;
  options.client.endpoints = config.store.endpoints;
  options.client.request_timeout = config.store.request_timeout;
  options.client.operation_timeout = config.store.operation_timeout;
  options.prefix = config.store.prefix;
  options.name = cluster_config.name;
  options.shards = cluster_config.shards;
  options.lease_ttl = std::chrono::duration_cast<std::chrono::seconds>(cluster_config.lease_ttl);
  options.quarantine = cluster_config.quarantine;
  for (const auto& [name, address] : cluster_config.peers) {
    options.peers[name] = address;
    if (name == cluster_config.name) continue;
    Peer peer{name, {}};
    std::string parse_error;
    if (!ParseListenAddress(address, &peer.address, &parse_error)) {
      return lockstore::Status::InvalidArgument("cluster.peers." + name + ": " + parse_error);
    }
    cluster->peers_.push_back(std::move(peer));
  }
  options.log = StoreEventLogSink();
  const std::size_t shards = cluster_config.shards;
  // Another replica may have advanced these fences while it owned the shard: drop what this
  // replica cached, so the first write after the quarantine reads etcd.
  options.on_gained = [&admission, shards](std::size_t shard) {
    admission.ForgetIdle([shards, shard](std::string_view key) {
      return lockstore::etcd::ShardOfKey(key, shards) == shard;
    });
  };

  auto& changes = prometheus::BuildCounter()
                      .Name("fencegate_cluster_ownership_changes_total")
                      .Help(
                          "Shards this replica started (gained, after the quarantine) or "
                          "stopped admitting writes to: lost (its lease ended or another "
                          "replica owns it) or handed_over (rebalancing: given up to the "
                          "replica rendezvous hashing prefers).")
                      .Register(registry);
  cluster->gained_ = &changes.Add({{"change", "gained"}});
  cluster->lost_ = &changes.Add({{"change", "lost"}});
  cluster->handed_over_ = &changes.Add({{"change", "handed_over"}});
  cluster->shards_owned_ = &prometheus::BuildGauge()
                                .Name("fencegate_cluster_shards_owned")
                                .Help("Shards this replica admits writes to right now.")
                                .Register(registry)
                                .Add({});
  cluster->lease_losses_ = &prometheus::BuildCounter()
                                .Name("fencegate_cluster_self_fence_events_total")
                                .Help(
                                    "Times this replica gave up all its shards because its "
                                    "etcd lease was not renewed in time (self-fencing).")
                                .Register(registry)
                                .Add({});
  cluster->self_fenced_ = &prometheus::BuildCounter()
                               .Name("fencegate_cluster_self_fenced_writes_total")
                               .Help(
                                   "Writes admitted here that were stopped (before admission "
                                   "ended or mid-body) because the shard stopped being ours.")
                               .Register(registry)
                               .Add({});
  auto& forwards = prometheus::BuildCounter()
                       .Name("fencegate_cluster_forwards_total")
                       .Help(
                           "Fenced writes forwarded to the shard's owner, by result: relayed "
                           "(the owner answered) or failed (unreachable, timed out).")
                       .Register(registry);
  cluster->forwards_ok_ = &forwards.Add({{"result", "relayed"}});
  cluster->forwards_failed_ = &forwards.Add({{"result", "failed"}});
  auto& refused = prometheus::BuildCounter()
                      .Name("fencegate_cluster_refusals_total")
                      .Help("Fenced writes refused with 503 because no replica could admit them.")
                      .Register(registry);
  cluster->refused_no_owner_ = &refused.Add({{"reason", "no_owner"}});
  cluster->refused_quarantine_ = &refused.Add({{"reason", "quarantine"}});
  cluster->refused_moved_ = &refused.Add({{"reason", "moved"}});

  const lockstore::Status status =
      lockstore::etcd::ShardOwnership::Start(std::move(options), &cluster->ownership_);
  if (!status.ok()) {
    return lockstore::Status::Unavailable("cannot start the cluster: " + status.ToString());
  }
  *out = std::move(cluster);
  return lockstore::Status::Ok();
}

ShardRoute ReplicaCluster::Route(std::string_view fence_key, bool forwarded) const {
  ShardRoute route;
  route.shard = ownership_->ShardOf(fence_key);
  const ShardView view = ownership_->Lookup(route.shard);
  switch (view.state) {
    case ShardView::State::kMine:
      route.kind = ShardRoute::Kind::kAdmitHere;
      return route;
    case ShardView::State::kPeer:
      if (forwarded) {
        refused_moved_->Increment();
        return route;
      }
      for (std::size_t i = 0; i < peers_.size(); ++i) {
        if (peers_[i].name != view.owner) continue;
        route.kind = ShardRoute::Kind::kForward;
        route.peer = i;
        return route;
      }
      break;  // ShardOwnership resolves only owners listed in cluster.peers
    case ShardView::State::kQuarantine:
      refused_quarantine_->Increment();
      return route;
    case ShardView::State::kNone:
      break;
  }
  refused_no_owner_->Increment();
  return route;
}

bool ReplicaCluster::StillMine(std::size_t shard) const { return ownership_->Admits(shard); }

bool ReplicaCluster::LeaseValid() const { return Clock::now() < ownership_->LeaseValidUntil(); }

json::object ReplicaCluster::AdminView() const {
  json::array shards;
  json::array owned;
  const std::vector<ShardView> views = ownership_->Snapshot();
  for (std::size_t shard = 0; shard < views.size(); ++shard) {
    const ShardView& view = views[shard];
    if (view.state == ShardView::State::kMine) owned.push_back(shard);
    shards.push_back(
        json::object{{"shard", shard}, {"state", StateName(view.state)}, {"owner", view.owner}});
  }
  json::array members;
  for (const std::string& member : ownership_->Members()) members.push_back(json::value(member));
  const auto left = ownership_->LeaseValidUntil() - Clock::now();
  const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(left).count();
  const auto stats = ownership_->stats();
  return {{"replica", self_},
          {"members", std::move(members)},
          {"lease_valid", left_ms > 0},
          {"lease_valid_for_ms", left_ms > 0 ? left_ms : 0},
          {"owned_shards", std::move(owned)},
          {"shards_gained", stats.gained},
          {"shards_lost", stats.lost},
          {"shards_handed_over", stats.handed_over},
          {"self_fence_events", stats.lease_losses},
          {"shards", std::move(shards)}};
}

void ReplicaCluster::RefreshMetrics() {
  std::size_t owned = 0;
  for (const ShardView& view : ownership_->Snapshot()) {
    if (view.state == ShardView::State::kMine) ++owned;
  }
  shards_owned_->Set(static_cast<double>(owned));
  const auto now = ownership_->stats();
  if (now.gained > last_.gained) gained_->Increment(static_cast<double>(now.gained - last_.gained));
  if (now.lost > last_.lost) lost_->Increment(static_cast<double>(now.lost - last_.lost));
  if (now.handed_over > last_.handed_over) {
    handed_over_->Increment(static_cast<double>(now.handed_over - last_.handed_over));
  }
  if (now.lease_losses > last_.lease_losses) {
    lease_losses_->Increment(static_cast<double>(now.lease_losses - last_.lease_losses));
  }
  last_ = now;
}

}  // namespace fencegate::gateway
