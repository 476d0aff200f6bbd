#pragma once

#include <array>
#include <cstddef>
#include <optional>
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

  // How the caller proved itself.
  enum class Via { kOpen, kBearer, kCertificate, kCookie };
  struct Result {
    unsigned status = 0;      // 0: go ahead; else 401
    std::string_view reason;  // missing_credentials / invalid_credentials
    std::string principal;    // who is asking ("" when open or not authenticated)
    Via via = Via::kOpen;
  };
  // `peer`: the client certificate of a TLS admin connection (may be null); a verified one
  // matching an admin principal's tls_* names authenticates like an admin key.
  // `cookie_principal`: the principal of the console session the request's cookie names (empty:
  // none). It counts only without a bearer key or certificate, and only while that principal is
  // still configured, so a reload that removes an admin also ends its console sessions.
  Result Check(std::string_view path, std::string_view authorization,
               std::size_t authorization_fields, const PeerIdentity* peer,
               std::string_view cookie_principal = {}) const;
  // True when admin principals are configured (the console then needs a login).
  bool enabled() const { return !credentials_.empty(); }
  // The principal whose bearer `key` this is (POST /ui/login), or nullopt.
  std::optional<std::string> PrincipalOfKey(std::string_view key) const;

 private:
  Credentials credentials_;
  bool metrics_public_;
  std::array<prometheus::Counter*, 2> refusals_{};  // missing, invalid
};

}  // namespace fencegate::gateway::auth
