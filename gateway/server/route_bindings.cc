#include "gateway/server/route_bindings.h"

#include <algorithm>
#include <map>

namespace fencegate::gateway {
namespace {

constexpr std::string_view kTemplateField = "fence_key=";
constexpr std::string_view kBackendField = "\nbackend=";

// The template of a recorded binding (RouteBinding's first field).
std::string RecordedTemplate(const std::string& binding) {
  if (!binding.starts_with(kTemplateField)) return {};
  const std::size_t end = binding.find(kBackendField);
  return binding.substr(kTemplateField.size(),
                        end == std::string::npos ? std::string::npos : end - kTemplateField.size());
}

std::string RecordedBackend(const std::string& binding) {
  const std::size_t at = binding.find(kBackendField);
  return at == std::string::npos ? std::string() : binding.substr(at + kBackendField.size());
}

std::string Describe(const std::string& binding) {
  return "fence_key \"" + RecordedTemplate(binding) + "\" on backend \"" +
         RecordedBackend(binding) + "\"";
}

}  // namespace

std::string RouteBinding(const RouteConfig& route) {
  return std::string(kTemplateField) + route.fence_key.source() + std::string(kBackendField) +
         route.backend;
}

lockstore::Status CheckAndRecordRouteBindings(const Config& config, lockstore::FenceStore& store,
                                              const std::vector<std::string>& accepted_routes) {
  for (const std::string& accepted : accepted_routes) {
    const bool known =
        std::any_of(config.routes.begin(), config.routes.end(),
                    [&](const RouteConfig& route) { return route.name == accepted; });
    if (!known) {
      return lockstore::Status::InvalidArgument("fence-key change accepted for route \"" +
                                                accepted + "\", but the config has no such route");
    }
  }
  std::map<std::string, std::string> recorded;
  if (lockstore::Status read = store.ReadRouteBindings(&recorded); !read.ok()) {
    return lockstore::Status::Unavailable(
        "reading the routes' fence-key bindings from the store: " + read.ToString());
  }
  std::map<std::string, std::string> to_record;
  std::string refused;
  for (const RouteConfig& route : config.routes) {
    const std::string binding = RouteBinding(route);
    const auto old = recorded.find(route.name);
    if (old != recorded.end() && old->second == binding) continue;
    to_record[route.name] = binding;
    if (old == recorded.end()) continue;
    const bool accepted = std::find(accepted_routes.begin(), accepted_routes.end(), route.name) !=
                          accepted_routes.end();
    if (accepted) continue;
    // The old template's keys start with its literal prefix; no fence there, no history lost.
    lockstore::FenceKeyTemplate old_template;
    std::string prefix;
    if (lockstore::FenceKeyTemplate::Parse(RecordedTemplate(old->second), &old_template).ok()) {
      prefix = old_template.KeyPrefix(route.name);
    }
    bool has_fences = false;
    if (lockstore::Status looked = store.HasFenceWithPrefix(prefix, &has_fences); !looked.ok()) {
      return lockstore::Status::Unavailable("looking for route \"" + route.name +
                                            "\"'s fences: " + looked.ToString());
    }
    if (!has_fences) continue;
    if (!refused.empty()) refused += "; ";
    refused += "route \"" + route.name + "\" changed from " + Describe(old->second) + " to " +
               Describe(binding) + " while the store holds fences under \"" + prefix + "\"";
  }
  if (!refused.empty()) {
    return lockstore::Status::InvalidArgument(
        refused +
        ": every resource of the route would get a fresh fence with no history, admitting a "
        "zombie's stale write. Restore the old fence_key/backend, or accept the change with "
        "--accept-fence-key-change ROUTE (docs/OPERATIONS.md \"Changing a route's fence keys\")");
  }
  return store.WriteRouteBindings(to_record);
}

}  // namespace fencegate::gateway
