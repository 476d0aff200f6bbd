#include "gateway/auth/peer_match.h"

#include <algorithm>

#include <boost/beast/core/string.hpp>

namespace fencegate::gateway::auth {
namespace {

bool AnyEqual(const std::vector<std::string>& presented, const std::vector<std::string>& allowed,
              bool ignore_case) {
  for (const std::string& name : presented) {
    for (const std::string& wanted : allowed) {
      if (ignore_case ? boost::beast::iequals(name, wanted) : name == wanted) return true;
    }
  }
  return false;
}

}  // namespace

bool PeerMatches(const PeerIdentity& peer, const PrincipalConfig& principal) {
  if (!peer.verified) return false;
  if (!peer.subject.empty() &&
      std::find(principal.tls_subjects.begin(), principal.tls_subjects.end(), peer.subject) !=
          principal.tls_subjects.end()) {
    return true;
  }
  return AnyEqual(peer.dns_sans, principal.tls_dns_sans, /*ignore_case=*/true) ||
         AnyEqual(peer.uri_sans, principal.tls_uri_sans, /*ignore_case=*/false);
}

}  // namespace fencegate::gateway::auth
