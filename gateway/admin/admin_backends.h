#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "gateway/observability/backend_metrics.h"
#include "gateway/server/config_generation.h"
#include "resource_adapters/transport/condition_book.h"
#include "resource_adapters/transport/upstream_servers.h"

// GET /admin/backends (README "Backends with several servers"): every backend of the
// configuration in force, every server, what the process knows of its health; and the part of
// /readyz that depends on backends (routes marked `required`).

namespace fencegate::gateway {

// One backend's entry: name, kind, policy, limits, counters and its servers. `servers` null: a
// kind without network servers (filesystem), listed with no servers.
boost::json::object BackendJson(std::string_view name, std::string_view kind,
                                const adapters::UpstreamServers* servers);

// The parts of one backend's entry, from the copies UpstreamServers hands out.
boost::json::object BackendJson(
    std::string_view name, std::string_view kind, const adapters::BalancingOptions& options,
    const std::vector<adapters::UpstreamServers::ServerSnapshot>& servers,
    const adapters::UpstreamServers::Counters& counters);

// A backend's condition-probe verdicts (docs/BACKEND_TRUST.md): {"policy", "probe_prefix",
// "probe_interval_ms", "reports": [{scope, verdict, probes, error, checked_at}]}; null for a kind
// that does not probe (http, filesystem).
boost::json::value ConditionsJson(const adapters::ConditionBook* book);

// The body of GET /admin/backends: {"backends": [...]} in the generation's backend order;
// `only` non-empty: that backend alone (an empty list when there is none of that name).
boost::json::object BackendsJson(const ConfigGeneration& generation, std::string_view only);

// What each networked backend of the generation reports, for its metrics
// (gateway/observability/backend_metrics.h).
std::vector<BackendSample> BackendSamples(const ConfigGeneration& generation);

// The names of the routes marked `required` whose backend has no usable server, in route
// order; `backend_usable(backend_index)` says whether one has. Empty: ready as far as backends go.
std::vector<std::string> RequiredRoutesWithoutServer(
    const std::vector<RouteRuntime>& routes,
    const std::function<bool(std::size_t backend_index)>& backend_usable);

// The same for a generation: a backend without network servers (filesystem) is always usable.
std::vector<std::string> RequiredRoutesWithoutServer(const ConfigGeneration& generation);

// A backend (an s3 bucket of it) found to ignore the conditions fenced writes need: /readyz is 503
// while there is one (only `verify` backends probe, so only they can be here).
struct UnenforcedConditions {
  std::string backend;
  std::string scope;   // the bucket; "" for the backend as a whole
  std::string failed;  // the failed probes, as ConditionReport::FailedProbesText
};
std::vector<UnenforcedConditions> BackendsIgnoringConditions(const ConfigGeneration& generation);

// True when some route of the generation is marked `required` (/readyz then reports on them).
bool AnyRouteRequired(const ConfigGeneration& generation);

}  // namespace fencegate::gateway
