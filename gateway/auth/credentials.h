#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/auth/auth_config.h"
#include "gateway/tls/peer_identity.h"

namespace fencegate::gateway::auth {

struct Authentication {
  enum class Kind {
    kNone,           // no credential at all
    kInvalid,        // a credential that identifies nobody (unknown key, other scheme, ...)
    kAuthenticated,  // `principal` proved itself
  };
  Kind kind = Kind::kNone;
  std::size_t principal = 0;  // index into Credentials::name()
};

// The principals of one listener, resolved for lookups. Immutable after construction, so
// network threads share it.
class Credentials {
 public:
  explicit Credentials(const CredentialsConfig& config);

  bool empty() const { return principals_.empty(); }
  std::size_t size() const { return principals_.size(); }
  const std::string& name(std::size_t principal) const { return principals_[principal].name; }
  std::optional<std::size_t> Find(std::string_view name) const;

  // `authorization`: the Authorization field value, `fields`: how many Authorization fields
  // the request has. A bearer key, when sent, decides (a wrong key is kInvalid even with a
  // good certificate); otherwise a verified client certificate (`peer`, may be null).
  Authentication Authenticate(std::string_view authorization, std::size_t fields,
                              const PeerIdentity* peer) const;

 private:
  struct KeyEntry {
    KeyDigest digest;
    std::size_t principal;
  };
  std::vector<PrincipalConfig> principals_;
  std::vector<KeyEntry> keys_;
};

}  // namespace fencegate::gateway::auth
