#pragma once

#include <atomic>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/beast/http/verb.hpp>

#include "gateway/config/config.h"
#include "gateway/http/router.h"
#include "gateway/observability/access_log.h"
#include "gateway/observability/metrics.h"
#include "gateway/observability/process_metrics.h"
#include "gateway/observability/relay_budget_metrics.h"
#include "gateway/observability/space_saving_top_k.h"
#include "gateway/observability/traffic_series.h"
#include "lockstore/fence/admission.h"
#include "lockstore/fence/advance_history.h"
#include "lockstore/fence/fence_store.h"
#include "lockstore/idempotency/idempotency_store.h"
#include "lockstore/locks/lock_service.h"
#include "lockstore/locks/token_signer.h"
#include "lockstore/tokens/token_verifier.h"

namespace fencegate::gateway {

class EventHub;
class GenerationSlot;
class LockApi;
class ReplicaCluster;
class RocksDbStoreMetrics;
namespace tls {
class ListenerTls;
}

// A route as the request path uses it: configuration plus what was resolved at start-up.
struct RouteRuntime {
  const RouteConfig* config = nullptr;
  std::size_t backend_index = 0;  // index of the backend's adapter in each network thread
  const RouteMetrics* metrics = nullptr;
  // Fenced methods Beast knows, by verb value, and any others by name.
  std::bitset<64> fenced_verbs;
  std::vector<std::string> fenced_other_methods;
  // The live check of tokens beyond max_token_advance (config->verify_tokens); null when unset.
  lockstore::TokenVerifier* token_verifier = nullptr;
  // The backend picks servers by fence key (policy fence_key): unfenced requests render the fence
  // key too, so that reads follow their key's writes. Other routes never render it for them.
  bool fence_key_affinity = false;
  // fencegate_backend_upstream_duration_seconds of the route and its backend; null for a backend
  // without network servers (filesystem).
  ShardedHistogram* upstream_duration = nullptr;

  bool IsFenced(boost::beast::http::verb verb, std::string_view method) const;
};

// Everything the network threads share for the process's life. Server::Start builds it
// completely before any thread starts and hands it out as const&: afterwards only the atomics
// below change (hence mutable). The pointees are owned by the Server, which stops every thread
// before it lets them go. What a reload changes (routes, backends, authentication, limits,
// timeouts) is in ConfigGeneration instead.
struct GatewayContext {
  lockstore::FenceStore* store = nullptr;
  lockstore::AdmissionController* admission = nullptr;
  const GatewayMetrics* metrics = nullptr;
  AccessLog* access_log = nullptr;
  LockApi* locks = nullptr;                      // null when locks.enabled is false
  lockstore::LockService* lock_table = nullptr;  // for the admin lock endpoints
  // Null unless locks.signing is configured (README "Tokens").
  const lockstore::TokenSigner* token_signer = nullptr;
  const tls::ListenerTls* traffic_tls = nullptr;  // the traffic listener's TLS and counters
  // Brings store-specific metrics up to date before /metrics renders (the etcd store's
  // counters); empty for the embedded store.
  std::function<void()> refresh_store_metrics;
  // limits.relay_buffer_memory's metrics, brought up to date before /metrics renders.
  RelayBudgetMetrics* relay_budget_metrics = nullptr;
  ProcessMetrics* process_metrics = nullptr;  // process_* from /proc, read at each scrape
  // Null unless `cluster:` is configured (docs/ARCHITECTURE.md "Several replicas"). The peers'
  // adapters follow the backends' in each network thread (ConfigGeneration::peer_adapter_base).
  const ReplicaCluster* cluster = nullptr;
  // The generation in force, for the admin listener (its credentials); network threads keep
  // their own views.
  const GenerationSlot* generations = nullptr;
  // What GET /admin/summary and a fence's history show, kept in bounded memory: the refusals'
  // top fence keys and clients (fed by Session::RecordRejection, refusals only), admitted and
  // refused writes per second and minute (sampled on the admin thread, read there), and the
  // durable advances (fed by the admission controller). Null in tests that need none.
  RefusalTops* refusal_tops = nullptr;
  TrafficSeries* traffic_series = nullptr;
  // The embedded store's metrics, whose one-minute sync latency window the summary shows (sampled
  // by the same admin-thread timer). Null on the etcd store.
  RocksDbStoreMetrics* rocksdb_metrics = nullptr;
  const lockstore::AdvanceHistory* advance_history = nullptr;
  std::int64_t started_at_ms = 0;  // when the process started serving (build info)
  // Recent rejections and lock grants for the console's live feed (GET /admin/events).
  EventHub* events = nullptr;

  mutable std::atomic<bool> accepting{false};  // all traffic listeners accept (readiness)
  mutable std::atomic<bool> draining{false};   // shutdown began: no new connections, no keep-alive
  mutable std::atomic<std::int64_t> open_connections{0};
  mutable std::atomic<std::int64_t> requests_in_flight{0};
};

// Builds the RouteRuntime of each configured route. `backend_names` lists the backends in
// adapter order; each route's metrics are looked up by its name (GatewayMetrics::RouteNamed).
std::vector<RouteRuntime> ResolveRoutes(const Config& config,
                                        const std::vector<std::string>& backend_names,
                                        GatewayMetrics& metrics);

}  // namespace fencegate::gateway
