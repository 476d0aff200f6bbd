#include "gateway/auth/principal_set.h"

namespace fencegate::gateway::auth {

PrincipalSet::PrincipalSet(const std::vector<std::string>& names, const Credentials& credentials)
    : members_(credentials.size(), false) {
  for (const std::string& name : names) {
    if (name == kEveryone) {
      everyone_ = true;
    } else if (const auto index = credentials.Find(name)) {
      members_[*index] = true;
    }
  }
}

std::vector<Grant> ResolveGrants(const std::map<std::string, std::vector<std::string>>& grants,
                                 const Credentials& credentials) {
  std::vector<Grant> out;
  for (const auto& [name, items] : grants)
    out.push_back({PrincipalSet({name}, credentials), items});
  return out;
}

}  // namespace fencegate::gateway::auth
