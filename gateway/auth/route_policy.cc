#include "gateway/auth/route_policy.h"

namespace fencegate::gateway::auth {
namespace {

constexpr std::string_view kEveryone = "*";

}  // namespace

RoutePolicy::RoutePolicy(const RoutePolicyConfig& config, const Credentials& credentials) {
  auto resolve = [&](const std::vector<std::string>& names, Members* out) {
    out->principals.assign(credentials.size(), false);
    for (const std::string& name : names) {
      if (name == kEveryone) {
        out->everyone = true;
      } else if (const auto index = credentials.Find(name)) {
        out->principals[*index] = true;
      }
    }
  };
  resolve(config.read, &read_);
  resolve(config.write, &write_);
  for (const auto& [name, prefixes] : config.advance) {
    Grant grant;
    grant.everyone = name == kEveryone;
    if (!grant.everyone) {
      const auto index = credentials.Find(name);
      if (!index) continue;
      grant.principal = *index;
    }
    for (const std::string& prefix : prefixes) {
      grant.prefixes.push_back(prefix == kEveryone ? std::string() : prefix);
    }
    advance_.push_back(std::move(grant));
  }
}

bool RoutePolicy::MayAdvance(std::size_t principal, std::string_view fence_key) const {
  for (const Grant& grant : advance_) {
    if (!grant.everyone && grant.principal != principal) continue;
    for (const std::string& prefix : grant.prefixes) {
      if (fence_key.starts_with(prefix)) return true;
    }
  }
  return false;
}

}  // namespace fencegate::gateway::auth
