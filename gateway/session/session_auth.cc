// Session: authentication and the route's policy (gateway/auth/), checked once the route is
// known and before anything is claimed, admitted or forwarded.
#include <boost/beast/http/field.hpp>

#include "gateway/session/session.h"

namespace fencegate::gateway {
namespace http = boost::beast::http;

namespace {

constexpr std::string_view kChallenge = "Bearer realm=\"fencegate\"";
constexpr std::string_view kInvalidChallenge =
    "Bearer realm=\"fencegate\", error=\"invalid_token\"";

}  // namespace

bool Session::Authorize(const RequestFields& fields) {
  auto& request = parser_->get();
  const std::size_t route = exchange_.route - generation_.routes.data();
  const bool write = request.method() != http::verb::get && request.method() != http::verb::head;
  // A TLS client's verified certificate (empty, unverified, on plain connections). A write
  // forwarded by another replica came on that replica's connection: its certificate names the
  // replica, not the client, and grants nothing; the client's key came along (below).
  exchange_.from_replica = fields.forwarded_by_count > 0;
  exchange_.auth = generation_.authorizer->Check(route, write, fields.authorization,
                                                 fields.authorization_count, ClientIdentity());
  if (!exchange_.auth.guarded) return true;
  // The key is fencegate's credential, not the backend's: it is never sent to a backend. A
  // fenced write may still go to its shard's owner, which authorizes it again (the replicas
  // share the policies, and the forwarded-by field proves nothing): RouteByShard drops the
  // field unless it forwards.
  const bool owner_may_ask = context_.cluster != nullptr && write &&
                             exchange_.route->IsFenced(request.method(), request.method_string());
  if (!owner_may_ask) request.erase(http::field::authorization);
  if (!exchange_.auth.refused) return true;
  const bool fenced = exchange_.route->IsFenced(request.method(), request.method_string());
  RefuseUnauthorized(*exchange_.auth.refused,
                     write ? "the route's policy does not let this principal write"
                           : "the route's policy does not let this principal read",
                     /*audited=*/fenced);
  return false;
}

bool Session::AuthorizeLock(std::string_view path, const RequestFields& fields) {
  const auto& request = parser_->get();
  std::string_view name = path.substr(generation_.config.locks.prefix.size());
  name = name.substr(0, name.find('/'));
  const bool write = request.method() != http::verb::get && request.method() != http::verb::head;
  exchange_.auth = generation_.authorizer->CheckLock(name, write, fields.authorization,
                                                     fields.authorization_count, &peer_identity_);
  if (!exchange_.auth.refused) return true;
  RefuseUnauthorized(*exchange_.auth.refused,
                     write ? "locks.policy does not let this principal acquire, renew or release "
                             "this lock"
                           : "locks.policy does not let this principal read lock state",
                     /*audited=*/false);
  return false;
}

void Session::RefuseUnauthorized(auth::Refusal refusal, std::string_view forbidden_detail,
                                 bool audited) {
  const unsigned status = auth::RefusalStatus(refusal);
  Refuse({.refusal = status == 401 ? Refusal::kUnauthenticated : Refusal::kForbidden,
          .detail = refusal == auth::Refusal::kMissingCredentials ? std::string_view{}
                    : refusal == auth::Refusal::kInvalidCredentials
                        ? "the credentials sent identify no principal"
                        : forbidden_detail,
          .outcome = status == 401 ? "unauthenticated" : "forbidden",
          // A refused write is kept in the audit trail like the fencing refusals.
          .audit_reason = audited ? auth::RefusalName(refusal) : std::string_view{},
          .www_authenticate = refusal == auth::Refusal::kMissingCredentials   ? kChallenge
                              : refusal == auth::Refusal::kInvalidCredentials ? kInvalidChallenge
                                                                              : std::string_view{},
          .reason = auth::RefusalName(refusal)});
}

std::optional<lockstore::Token> Session::AdmitBound() {
  exchange_.advance_forbidden = !generation_.authorizer->MayAdvance(
      exchange_.route - generation_.routes.data(), exchange_.auth, fenced_.fence_key());
  if (exchange_.advance_forbidden) return lockstore::Token{0};
  const lockstore::Token route_bound = exchange_.route->config->max_token_advance;
  if (exchange_.token_signed || exchange_.token_verified || route_bound == 0) return std::nullopt;
  return route_bound;
}

void Session::RefuseAdvance() {
  generation_.authorizer->CountRefusal(exchange_.route - generation_.routes.data(),
                                       auth::Refusal::kAdvanceNotPermitted);
  Refuse({.refusal = Refusal::kForbidden,
          .detail = "this token would raise the fence, and the route's policy grants this "
                    "principal no advance on this fence key; a write at the current highest "
                    "token is allowed",
          .outcome = "forbidden",
          .audit_reason = auth::RefusalName(auth::Refusal::kAdvanceNotPermitted),
          .fence_fields = true,
          .reason = auth::RefusalName(auth::Refusal::kAdvanceNotPermitted)});
}

}  // namespace fencegate::gateway
