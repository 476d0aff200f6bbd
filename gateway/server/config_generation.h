#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gateway/auth/admin_guard.h"
#include "gateway/auth/authorizer.h"
#include "gateway/config/config.h"
#include "gateway/http/router.h"
#include "gateway/server/gateway_context.h"
#include "lockstore/idempotency/idempotency_store.h"
#include "resource_adapters/adapter.h"

namespace fencegate::gateway {

// What a reload can change (README "Reloading"), built whole off the network threads and never
// changed afterwards. A session keeps the generation it was accepted under for its life, so a
// request always runs on one configuration; the previous generation goes when its last session
// does (ThreadGeneration). Process-wide state (store, admission, locks, metrics registry) stays in
// GatewayContext.
struct ConfigGeneration {
  std::uint64_t number = 0;  // 1 for the configuration loaded at start, then one per reload
  Config config;
  std::string file_text;    // the configuration file's bytes, for the next reload's diff
  std::string config_hash;  // the first 16 hex digits of the SHA-256 of file_text
  std::unique_ptr<Router> router;
  std::vector<RouteRuntime> routes;  // same order as config.routes
  std::unique_ptr<auth::Authorizer> authorizer;
  std::unique_ptr<auth::AdminGuard> admin_guard;
  // Null unless a route keeps idempotency records (README "Idempotency keys"); the store itself
  // is process-wide and outlives every generation.
  lockstore::IdempotencyStore* idempotency = nullptr;
  // The backends, in the network threads' adapter order (RouteRuntime::backend_index). The
  // factories are owned by the Server until shutdown; a backend whose configuration did not
  // change keeps its factory, and each thread keeps its adapter (and upstream connections).
  std::vector<std::string> backend_names;
  std::vector<adapters::AdapterFactory*> backend_factories;
  // Several replicas: the peers' adapters follow the backends' in each thread.
  std::size_t peer_adapter_base = 0;
};

}  // namespace fencegate::gateway
