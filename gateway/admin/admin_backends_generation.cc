#include "gateway/admin/admin_backends.h"

#include "resource_adapters/adapter.h"

// The parts of admin_backends.h that read a generation's backends (their UpstreamServers).

namespace fencegate::gateway {
namespace json = boost::json;
using adapters::UpstreamServers;

json::object BackendJson(std::string_view name, std::string_view kind,
                         const UpstreamServers* servers) {
  if (servers == nullptr) {
    return {{"name", name}, {"kind", kind}, {"policy", nullptr}, {"servers", json::array{}}};
  }
  return BackendJson(name, kind, servers->options(), servers->Snapshot(), servers->counters());
}

json::object BackendsJson(const ConfigGeneration& generation, std::string_view only) {
  json::array backends;
  for (std::size_t i = 0; i < generation.backend_names.size(); ++i) {
    const std::string& name = generation.backend_names[i];
    if (!only.empty() && name != only) continue;
    const auto config = generation.config.backends.find(name);
    const std::string kind = config != generation.config.backends.end() ? config->second.kind : "";
    const std::shared_ptr<UpstreamServers> servers =
        generation.backend_factories[i]->upstream_servers();
    backends.push_back(BackendJson(name, kind, servers.get()));
  }
  return {{"backends", std::move(backends)}};
}

std::vector<BackendSample> BackendSamples(const ConfigGeneration& generation) {
  std::vector<BackendSample> samples;
  for (std::size_t i = 0; i < generation.backend_names.size(); ++i) {
    const std::shared_ptr<UpstreamServers> servers =
        generation.backend_factories[i]->upstream_servers();
    if (servers == nullptr) continue;
    samples.push_back({generation.backend_names[i], servers->Snapshot(), servers->counters()});
  }
  return samples;
}

std::vector<std::string> RequiredRoutesWithoutServer(const ConfigGeneration& generation) {
  return RequiredRoutesWithoutServer(generation.routes, [&](std::size_t backend) {
    const std::shared_ptr<UpstreamServers> servers =
        generation.backend_factories[backend]->upstream_servers();
    return servers == nullptr || servers->AnyUsable();
  });
}

bool AnyRouteRequired(const ConfigGeneration& generation) {
  for (const RouteConfig& route : generation.config.routes) {
    if (route.required) return true;
  }
  return false;
}

}  // namespace fencegate::gateway
