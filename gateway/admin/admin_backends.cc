#include "gateway/admin/admin_backends.h"

#include <boost/json/value.hpp>

#include "gateway/admin/admin_json.h"

namespace fencegate::gateway {
namespace json = boost::json;
using adapters::UpstreamServers;

namespace {

std::string_view PolicyName(adapters::BalancingPolicy policy) {
  switch (policy) {
    case adapters::BalancingPolicy::kRoundRobin:
      return "round_robin";
    case adapters::BalancingPolicy::kLeastRequest:
      return "least_request";
    case adapters::BalancingPolicy::kFenceKey:
      return "fence_key";
  }
  return "round_robin";
}

json::value ReasonJson(UpstreamServers::Unusable reason) {
  switch (reason) {
    case UpstreamServers::Unusable::kNo:
      return nullptr;
    case UpstreamServers::Unusable::kConnectFailures:
      return "connect_failures";
    case UpstreamServers::Unusable::kServerErrors:
      return "server_errors";
    case UpstreamServers::Unusable::kHealthCheck:
      return "health_check";
  }
  return nullptr;
}

json::object ServerJson(const UpstreamServers::ServerSnapshot& server) {
  json::array addresses;
  for (const std::string& address : server.addresses) addresses.emplace_back(address);
  json::value last_check = nullptr;
  if (server.last_check_unix_ms != 0) {
    last_check = json::object{{"at", Rfc3339OrNull(server.last_check_unix_ms)},
                              {"result", server.last_check_result}};
  }
  return {{"url", server.url},
          {"weight", server.weight},
          {"state", server.ejected ? "ejected" : (server.healthy ? "healthy" : "unhealthy")},
          {"usable", server.usable},
          {"reason", ReasonJson(server.reason)},
          {"ejected_for_ms", server.ejected_for.count()},
          {"ejections", server.ejections},
          {"in_flight", server.in_flight},
          {"connections", server.connections},
          {"requests", server.requests},
          {"health_checks",
           {{"passed", server.health_checks_passed}, {"failed", server.health_checks_failed}}},
          {"last_check", std::move(last_check)},
          {"addresses", std::move(addresses)}};
}

json::value HealthCheckJson(const std::optional<adapters::HealthCheckOptions>& check) {
  if (!check) return nullptr;
  return json::object{{"path", check->path},
                      {"interval_ms", check->interval.count()},
                      {"timeout_ms", check->timeout.count()},
                      {"healthy_threshold", check->healthy_threshold},
                      {"unhealthy_threshold", check->unhealthy_threshold},
                      {"expected_status", std::to_string(check->expected_status_min) + "-" +
                                              std::to_string(check->expected_status_max)}};
}

}  // namespace

json::object BackendJson(std::string_view name, std::string_view kind,
                         const adapters::BalancingOptions& options,
                         const std::vector<UpstreamServers::ServerSnapshot>& servers,
                         const UpstreamServers::Counters& counters) {
  json::array items;
  std::uint64_t usable = 0;
  for (const UpstreamServers::ServerSnapshot& server : servers) {
    usable += server.usable ? 1 : 0;
    items.push_back(ServerJson(server));
  }
  return {{"name", name},
          {"kind", kind},
          {"policy", PolicyName(options.policy)},
          {"usable_servers", usable},
          {"health_check", HealthCheckJson(options.health_check)},
          {"servers", std::move(items)},
          {"limits",
           {{"max_connections", options.limits.max_connections},
            {"max_pending", options.limits.max_pending}}},
          {"counters",
           {{"overload_max_connections", counters.overload_max_connections},
            {"overload_max_pending", counters.overload_max_pending},
            {"retries_connect_failed", counters.retries_connect_failed},
            {"retries_tls_failed", counters.retries_tls_failed},
            {"no_healthy_server", counters.no_healthy_server},
            {"orphaned_locks_released", counters.orphaned_locks_released}}}};
}

std::vector<std::string> RequiredRoutesWithoutServer(
    const std::vector<RouteRuntime>& routes,
    const std::function<bool(std::size_t backend_index)>& backend_usable) {
  std::vector<std::string> names;
  for (const RouteRuntime& route : routes) {
    if (route.config->required && !backend_usable(route.backend_index)) {
      names.push_back(route.config->name);
    }
  }
  return names;
}

}  // namespace fencegate::gateway
