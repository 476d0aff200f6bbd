#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "gateway/auth/auth_config.h"
#include "gateway/auth/credentials.h"
#include "gateway/auth/principal_set.h"

namespace fencegate::gateway::auth {

// The built-in lock API's policy (config `locks.policy`) with principal names resolved to
// indexes of the traffic Credentials.
class LockPolicy {
 public:
  LockPolicy(const LockPolicyConfig& config, const Credentials& credentials);

  // GET {prefix}{name}: the lock's public state.
  bool MayRead(std::size_t principal) const { return read_.Has(principal); }
  // Acquire, renew and release of lock `name`: a grant of `principal` (or "*") whose pattern
  // matches it. A name that is no valid lock name guards nothing: the lock API answers 400.
  bool MayAcquire(std::size_t principal, std::string_view name) const;

 private:
  PrincipalSet read_;
  std::vector<Grant> acquire_;
};

}  // namespace fencegate::gateway::auth
