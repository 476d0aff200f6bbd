#include "gateway/auth/lock_policy.h"

#include "lockstore/locks/lock_rules.h"

namespace fencegate::gateway::auth {

LockPolicy::LockPolicy(const LockPolicyConfig& config, const Credentials& credentials)
    : read_(config.read, credentials), acquire_(ResolveGrants(config.acquire, credentials)) {}

bool LockPolicy::MayAcquire(std::size_t principal, std::string_view name) const {
  if (!lockstore::IsValidLockName(name)) return true;
  for (const Grant& grant : acquire_) {
    if (!grant.who.Has(principal)) continue;
    for (const std::string& pattern : grant.items) {
      if (lockstore::GlobMatch(pattern, name)) return true;
    }
  }
  return false;
}

}  // namespace fencegate::gateway::auth
