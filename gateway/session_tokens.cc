// The signed-token checks of a fenced write (README "Tokens"), between parsing Fencing-Token
// and admission: everything here is decided before the fence is touched.
#include "gateway/network_thread.h"
#include "gateway/session.h"
#include "gateway/time_format.h"
#include "lockstore/token_signer.h"

namespace fencegate::gateway {

bool Session::CheckTokenSignature() {
  const auto& request = parser_->get();
  const RouteConfig& route = *exchange_.route->config;
  const std::size_t fields = request.count(lockstore::kTokenSignatureField);
  exchange_.token_signed = false;
  if (fields == 0) {
    if (!route.require_signed_tokens) return true;
    Refuse({.status = 403,
            .slug = "unsigned-token",
            .title = "Signed fencing token required",
            .detail = "this route accepts only tokens issued by the lock API, sent with their "
                      "Fencing-Token-Signature",
            .outcome = "unsigned_token",
            .rejection = RejectionReason::kUnsignedToken,
            .fence_fields = true});
    return false;
  }
  // Without a keyring nothing could verify it: the field is the backend's business then.
  if (context_.token_signer == nullptr) return true;
  if (fields > 1) {
    Refuse({.status = 400,
            .slug = "invalid-token-signature",
            .title = "Invalid fencing token signature",
            .detail = "the Fencing-Token-Signature header must appear exactly once",
            .outcome = "invalid_token",
            .rejection = RejectionReason::kInvalidToken});
    return false;
  }
  const lockstore::SignatureCheck check =
      context_.token_signer->Verify(request.find(lockstore::kTokenSignatureField)->value(),
                                    *exchange_.token, exchange_.fence_key, NowUnixMs());
  switch (check) {
    case lockstore::SignatureCheck::kValid:
      exchange_.token_signed = true;
      return true;
    case lockstore::SignatureCheck::kMalformed:
      Refuse(
          {.status = 400,
           .slug = "invalid-token-signature",
           .title = "Invalid fencing token signature",
           .detail = "Fencing-Token-Signature must be kid=ID;exp=UNIX_MS;scope=LOCK;mac=BASE64URL",
           .outcome = "invalid_token",
           .rejection = RejectionReason::kInvalidToken});
      return false;
    case lockstore::SignatureCheck::kForged:
      Refuse({.status = 403,
              .slug = "forged-token",
              .title = "Fencing token signature does not verify",
              .detail = "the signature does not match this token, lock and expiry under any "
                        "configured key",
              .outcome = "forged_token",
              .rejection = RejectionReason::kForgedToken,
              .fence_fields = true});
      return false;
    case lockstore::SignatureCheck::kExpired:
      Refuse({.status = 403,
              .slug = "expired-token",
              .title = "Fencing token expired",
              .detail = "the lease this token was signed for has ended: renew the lock for a "
                        "fresh signature",
              .outcome = "expired_token",
              .rejection = RejectionReason::kExpiredToken,
              .fence_fields = true});
      return false;
    case lockstore::SignatureCheck::kWrongScope:
      Refuse({.status = 403,
              .slug = "token-scope-mismatch",
              .title = "Fencing token signed for another lock",
              .detail = "the signing lock's fence_keys (locks.rules) do not include this "
                        "request's fence key",
              .outcome = "token_scope",
              .rejection = RejectionReason::kTokenScope,
              .fence_fields = true});
      return false;
  }
  return false;
}

}  // namespace fencegate::gateway
