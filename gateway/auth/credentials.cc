#include "gateway/auth/credentials.h"

#include "gateway/auth/api_key.h"
#include "gateway/auth/peer_match.h"

namespace fencegate::gateway::auth {

Credentials::Credentials(const CredentialsConfig& config) : principals_(config.principals) {
  for (std::size_t i = 0; i < principals_.size(); ++i) {
    for (const KeyDigest& digest : principals_[i].api_key_sha256) keys_.push_back({digest, i});
    principals_[i].api_key_sha256.clear();  // kept once, in keys_
  }
}

std::optional<std::size_t> Credentials::Find(std::string_view name) const {
  for (std::size_t i = 0; i < principals_.size(); ++i) {
    if (principals_[i].name == name) return i;
  }
  return std::nullopt;
}

Authentication Credentials::Authenticate(std::string_view authorization, std::size_t fields,
                                         const PeerIdentity* peer) const {
  if (fields > 1) return {Authentication::Kind::kInvalid};
  if (fields == 1) {
    const std::optional<std::string_view> key = ParseBearer(authorization);
    if (!key) return {Authentication::Kind::kInvalid};
    const KeyDigest digest = DigestApiKey(*key);
    // Every entry is compared, whatever matched before: the time taken does not say which
    // digest (or how much of one) matched.
    bool found = false;
    std::size_t principal = 0;
    for (const KeyEntry& entry : keys_) {
      const bool equal = DigestsEqual(entry.digest, digest);
      principal = equal ? entry.principal : principal;
      found = found || equal;
    }
    if (!found) return {Authentication::Kind::kInvalid};
    return {Authentication::Kind::kAuthenticated, principal};
  }
  if (peer != nullptr && peer->verified) {
    for (std::size_t i = 0; i < principals_.size(); ++i) {
      if (PeerMatches(*peer, principals_[i])) return {Authentication::Kind::kAuthenticated, i};
    }
    return {Authentication::Kind::kInvalid};
  }
  return {Authentication::Kind::kNone};
}

}  // namespace fencegate::gateway::auth
