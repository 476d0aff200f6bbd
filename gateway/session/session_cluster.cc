// Several replicas (docs/ARCHITECTURE.md "Several replicas"): a fenced write is admitted only
// by the replica that owns its fence key's shard; the others forward it there, once.
#include "gateway/cluster/replica_cluster.h"
#include "gateway/http/request_fields.h"
#include "gateway/server/network_thread.h"
#include "gateway/session/session.h"

namespace fencegate::gateway {

Session::ShardStep Session::RouteByShard(const RequestFields& fields) {
  if (context_.cluster == nullptr) return ShardStep::kAdmitHere;
  auto& request = parser_->get();
  // The header walk of HandleRequest counted the field: no scan of the fields here for the
  // direct write (most of them), one erase for a forwarded one.
  const bool forwarded = fields.forwarded_by_count > 0;
  const ShardRoute route = context_.cluster->Route(fenced_.fence_key(), forwarded);
  switch (route.kind) {
    case ShardRoute::Kind::kAdmitHere:
      if (forwarded) request.erase(kForwardedByField);
      // Kept by Authorize for the owner, which this replica is: the backend never sees it.
      if (exchange_.auth.guarded) request.erase(boost::beast::http::field::authorization);
      exchange_.cluster_shard = route.shard;
      return ShardStep::kAdmitHere;
    case ShardRoute::Kind::kForward:
      // A plain proxy hop: the owner admits (and keeps any idempotency record); this replica
      // neither admits nor stores anything for the write. Never forwarded: the field is absent.
      // The client's Authorization goes along: the owner authorizes the write again.
      request.insert(boost::beast::http::field::unknown, kForwardedByField,
                     generation_.config.cluster.name);
      exchange_.peer_adapter = generation_.peer_adapter_base + route.peer;
      exchange_.outcome = "forwarded";
      return ShardStep::kForwardToOwner;
    case ShardRoute::Kind::kRefuse:
      break;
  }
  Refuse({.refusal = Refusal::kShardUnavailable,
          .outcome = "shard_unavailable",
          .audit_reason = "shard_unavailable",
          .retry_after = true});
  return ShardStep::kRefused;
}

bool Session::SelfFenced() {
  if (exchange_.self_fenced) return true;
  if (!exchange_.cluster_shard || context_.cluster->StillMine(*exchange_.cluster_shard)) {
    return false;
  }
  exchange_.self_fenced = true;
  context_.cluster->CountSelfFenced();
  return true;
}

void Session::RefuseSelfFenced() {
  Refuse({.refusal = Refusal::kShardUnavailable,
          .outcome = "self_fenced",
          .audit_reason = "self_fenced",
          .close = !parser_->is_done(),
          .retry_after = true});
}

}  // namespace fencegate::gateway
