#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/auth/auth_config.h"
#include "gateway/auth/credentials.h"
#include "gateway/auth/principal_set.h"

namespace fencegate::gateway::auth {

// One route's policy with principal names resolved to indexes of the traffic Credentials.
// Names the configuration loader already checked; an unknown one grants nothing.
class RoutePolicy {
 public:
  RoutePolicy(const RoutePolicyConfig& config, const Credentials& credentials);

  bool MayRead(std::size_t principal) const { return read_.Has(principal); }
  bool MayWrite(std::size_t principal) const { return write_.Has(principal); }
  // Whether `principal` may raise the fence `fence_key` (a write at the current highest token
  // needs no grant).
  bool MayAdvance(std::size_t principal, std::string_view fence_key) const;

 private:
  PrincipalSet read_;
  PrincipalSet write_;
  std::vector<Grant> advance_;
};

}  // namespace fencegate::gateway::auth
