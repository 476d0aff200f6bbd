#include "gateway/auth/route_policy.h"

namespace fencegate::gateway::auth {

RoutePolicy::RoutePolicy(const RoutePolicyConfig& config, const Credentials& credentials)
    : read_(config.read, credentials),
      write_(config.write, credentials),
      advance_(ResolveGrants(config.advance, credentials)) {}

bool RoutePolicy::MayAdvance(std::size_t principal, std::string_view fence_key) const {
  for (const Grant& grant : advance_) {
    if (!grant.who.Has(principal)) continue;
    for (const std::string& prefix : grant.items) {
      // "*" grants every key of the route.
      if (prefix == kEveryone || fence_key.starts_with(prefix)) return true;
    }
  }
  return false;
}

}  // namespace fencegate::gateway::auth
