#include "gateway/auth/admin_guard.h"

namespace fencegate::gateway::auth {

AdminGuard::AdminGuard(const AdminAuthConfig& config, prometheus::Registry& registry)
    : credentials_(config.credentials), metrics_public_(config.metrics_public) {
  auto& family = prometheus::BuildCounter()
                     .Name("fencegate_admin_auth_refusals_total")
                     .Help("Admin requests refused for missing or invalid credentials (401).")
                     .Register(registry);
  refusals_[0] = &family.Add({{"reason", "missing_credentials"}});
  refusals_[1] = &family.Add({{"reason", "invalid_credentials"}});
}

AdminGuard::Result AdminGuard::Check(std::string_view path, std::string_view authorization,
                                     std::size_t authorization_fields, const PeerIdentity* peer,
                                     std::string_view cookie_principal) const {
  Result result;
  const bool open = credentials_.empty() || path == "/healthz" || path == "/readyz" ||
                    (metrics_public_ && path == "/metrics");
  if (open && authorization_fields == 0) return result;
  const Authentication who = credentials_.Authenticate(authorization, authorization_fields, peer);
  if (who.kind == Authentication::Kind::kAuthenticated) {
    result.principal = credentials_.name(who.principal);
    result.via = authorization_fields != 0 ? Via::kBearer : Via::kCertificate;
    return result;
  }
  if (who.kind == Authentication::Kind::kNone && !cookie_principal.empty() &&
      credentials_.Find(cookie_principal)) {
    result.principal = std::string(cookie_principal);
    result.via = Via::kCookie;
    return result;
  }
  // Open paths answer whatever was sent; an operator's typo there is harmless.
  if (open) return result;
  const bool missing = who.kind == Authentication::Kind::kNone;
  result.status = 401;
  result.reason = missing ? "missing_credentials" : "invalid_credentials";
  refusals_[missing ? 0 : 1]->Increment();
  return result;
}

std::optional<std::string> AdminGuard::PrincipalOfKey(std::string_view key) const {
  if (key.empty()) return std::nullopt;
  const std::string authorization = "Bearer " + std::string(key);
  const Authentication who = credentials_.Authenticate(authorization, 1, nullptr);
  if (who.kind != Authentication::Kind::kAuthenticated) return std::nullopt;
  return credentials_.name(who.principal);
}

}  // namespace fencegate::gateway::auth
