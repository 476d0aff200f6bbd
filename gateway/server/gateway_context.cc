#include "gateway/server/gateway_context.h"

#include <algorithm>

#include <boost/beast/core/string.hpp>

namespace fencegate::gateway {
namespace http = boost::beast::http;

bool RouteRuntime::IsFenced(http::verb verb, std::string_view method) const {
  if (config->fence_reads) return true;
  const auto index = static_cast<std::size_t>(verb);
  if (verb != http::verb::unknown && index < fenced_verbs.size()) return fenced_verbs[index];
  for (const std::string& other : fenced_other_methods) {
    if (other == method) return true;
  }
  return false;
}

std::vector<RouteRuntime> ResolveRoutes(const Config& config,
                                        const std::vector<std::string>& backend_names,
                                        GatewayMetrics& metrics) {
  std::vector<RouteRuntime> routes;
  routes.reserve(config.routes.size());
  for (std::size_t i = 0; i < config.routes.size(); ++i) {
    const RouteConfig& route = config.routes[i];
    RouteRuntime runtime;
    runtime.config = &route;
    const auto backend = std::find(backend_names.begin(), backend_names.end(), route.backend);
    runtime.backend_index = static_cast<std::size_t>(backend - backend_names.begin());
    runtime.metrics = &metrics.RouteNamed(route.name);
    if (const auto found = config.backends.find(route.backend); found != config.backends.end()) {
      const adapters::BalancingOptions* balancing = BackendBalancing(found->second);
      runtime.fence_key_affinity =
          balancing != nullptr && balancing->policy == adapters::BalancingPolicy::kFenceKey;
      if (balancing != nullptr)
        runtime.upstream_duration = metrics.BackendUpstreamDuration(route.name, route.backend);
    }
    for (const std::string& method : route.fenced_methods) {
      const http::verb verb = http::string_to_verb(method);
      const auto index = static_cast<std::size_t>(verb);
      if (verb != http::verb::unknown && index < runtime.fenced_verbs.size()) {
        runtime.fenced_verbs.set(index);
      } else {
        runtime.fenced_other_methods.push_back(method);
      }
    }
    routes.push_back(std::move(runtime));
  }
  return routes;
}

}  // namespace fencegate::gateway
