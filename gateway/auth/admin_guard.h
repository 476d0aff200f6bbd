#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include "gateway/auth/auth_config.h"
#include "gateway/auth/credentials.h"

namespace fencegate::gateway::auth {

// The admin listener's gate: its own principals (API keys or client certificates), required for
// everything but /healthz and /readyz (and /metrics when admin.metrics_public). No admin
// principals: everything is open.
class AdminGuard {
 public:
  AdminGuard(const AdminAuthConfig& config, prometheus::Registry& registry);

  struct Result {
    unsigned status = 0;      // 0: go ahead; else 401
    std::string_view reason;  // missing_credentials / invalid_credentials
    std::string principal;    // who is asking ("" when open or not authenticated)
  };
  // `peer`: the client certificate of a TLS admin connection (may be null); a verified one
  // matching an admin principal's tls_* names authenticates like an admin key.
  Result Check(std::string_view path, std::string_view authorization,
               std::size_t authorization_fields, const PeerIdentity* peer) const;

 private:
  Credentials credentials_;
  bool metrics_public_;
  std::array<prometheus::Counter*, 2> refusals_{};  // missing, invalid
};

}  // namespace fencegate::gateway::auth
