#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/auth/credentials.h"

namespace fencegate::gateway::auth {

// A list of principal names from a policy ("*": any authenticated principal), resolved to
// indexes of the traffic Credentials. Names the configuration loader already checked; an
// unknown one admits nobody.
class PrincipalSet {
 public:
  PrincipalSet() = default;
  PrincipalSet(const std::vector<std::string>& names, const Credentials& credentials);

  bool Has(std::size_t principal) const {
    return everyone_ || (principal < members_.size() && members_[principal]);
  }

 private:
  bool everyone_ = false;
  std::vector<bool> members_;
};

// "*" in a policy's principal lists and grant keys.
inline constexpr std::string_view kEveryone = "*";

// One entry of a policy's grant map (principal or "*" -> what it may touch: fence-key prefixes
// of a route's `advance`, lock-name patterns of the lock policy's `acquire`).
struct Grant {
  PrincipalSet who;
  std::vector<std::string> items;
};
std::vector<Grant> ResolveGrants(const std::map<std::string, std::vector<std::string>>& grants,
                                 const Credentials& credentials);

}  // namespace fencegate::gateway::auth
