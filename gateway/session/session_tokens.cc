// The token checks of a fenced write (README "Tokens"): the signature, between parsing
// Fencing-Token and admission, and the live check with the lock service of a token the
// admission found too far ahead. Nothing here touches the fence.
#include <array>

#include "gateway/http/time_format.h"
#include "gateway/server/network_thread.h"
#include "gateway/session/session.h"
#include "lockstore/locks/token_signer.h"

namespace fencegate::gateway {
namespace net = boost::asio;
namespace {

// What each token refusal tells the client, by Session::TokenRefusal. One table, so every
// refusal of README "Tokens" has the same shape (403s carry the fence fields).
struct TokenRefusalText {
  unsigned status;
  std::string_view slug, title, detail, outcome;
  RejectionReason rejection;
};
constexpr std::array<TokenRefusalText, 8> kTokenRefusals = {{
    {403, "unsigned-token", "Signed fencing token required",
     "this route accepts only tokens issued by the lock API, sent with their "
     "Fencing-Token-Signature",
     "unsigned_token", RejectionReason::kUnsignedToken},
    {400, "invalid-token-signature", "Invalid fencing token signature",
     "the Fencing-Token-Signature header must appear exactly once", "invalid_token",
     RejectionReason::kInvalidToken},
    {400, "invalid-token-signature", "Invalid fencing token signature",
     "Fencing-Token-Signature must be kid=ID;exp=UNIX_MS;scope=LOCK;mac=BASE64URL", "invalid_token",
     RejectionReason::kInvalidToken},
    {403, "forged-token", "Fencing token signature does not verify",
     "the signature does not match this token, lock and expiry under any configured key",
     "forged_token", RejectionReason::kForgedToken},
    {403, "expired-token", "Fencing token expired",
     "the lease this token was signed for has ended: renew the lock for a fresh signature",
     "expired_token", RejectionReason::kExpiredToken},
    {403, "token-scope-mismatch", "Fencing token signed for another lock",
     "the signing lock's fence_keys (locks.rules) do not include this request's fence key",
     "token_scope", RejectionReason::kTokenScope},
    {403, "token-advance-too-large", "Fencing token too far ahead",
     "the token is more than the route's max_token_advance above the highest seen; only a "
     "signed token may jump further",
     "token_advance", RejectionReason::kTokenAdvance},
    {403, "token-advance-too-large", "Fencing token too far ahead",
     "the token is more than the route's max_token_advance above the highest seen, and the live "
     "check found no such lock holder: the lock service's current holder has another token",
     "token_advance", RejectionReason::kTokenAdvance},
}};

}  // namespace

void Session::RefuseToken(TokenRefusal which) {
  const TokenRefusalText& text = kTokenRefusals[static_cast<std::size_t>(which)];
  Refuse({.status = text.status,
          .slug = text.slug,
          .title = text.title,
          .detail = text.detail,
          .outcome = text.outcome,
          .rejection = text.rejection,
          .fence_fields = text.status == 403});
}

void Session::VerifyTokenLive() {
  const RouteRuntime& route = *exchange_.route;
  const lockstore::RequestFacts facts{RequestPath(), host_lower_, route.config->name};
  std::string lock_name;
  if (!route.config->verify_tokens->lock_name.Render(facts, &lock_name)) {
    // No lock to ask about, so nothing can vouch for the token.
    route.metrics
        ->token_verifications[static_cast<std::size_t>(lockstore::TokenCheck::Verdict::kNotHeld)]
        ->Increment();
    RefuseToken(TokenRefusal::kNotHeld);
    return;
  }
  route.token_verifier->Verify(
      std::move(lock_name), *exchange_.token,
      [self = shared_from_this()](lockstore::TokenCheck check) {
        // On a verifier thread: hop back to this session's thread.
        self->thread_.inbox().Post([self, check = std::move(check)] { self->OnTokenCheck(check); });
      });
}

void Session::OnTokenCheck(const lockstore::TokenCheck& check) {
  exchange_.route->metrics->token_verifications[static_cast<std::size_t>(check.verdict)]
      ->Increment();
  switch (check.verdict) {
    case lockstore::TokenCheck::Verdict::kHeld:
      // Admitted again without the bound: the fence still refuses it if a higher token came in
      // meanwhile.
      exchange_.token_verified = true;
      Admit();
      return;
    case lockstore::TokenCheck::Verdict::kNotHeld:
      RefuseToken(TokenRefusal::kNotHeld);
      return;
    case lockstore::TokenCheck::Verdict::kUnavailable:
      scratch_ = check.status.message();
      Refuse({.status = 503,
              .slug = "token-verification-unavailable",
              .title = "Fencing token cannot be verified",
              .detail = scratch_,
              .outcome = "token_unverified",
              .rejection = RejectionReason::kTokenUnverified,
              .retry_after = true,
              .fence_fields = true});
      return;
  }
}

bool Session::CheckTokenSignature() {
  const auto& request = parser_->get();
  const RouteConfig& route = *exchange_.route->config;
  const std::size_t fields = request.count(lockstore::kTokenSignatureField);
  exchange_.token_signed = false;
  if (fields == 0) {
    if (!route.require_signed_tokens) return true;
    RefuseToken(TokenRefusal::kUnsigned);
    return false;
  }
  // Without a keyring nothing could verify it: the field is the backend's business then.
  if (context_.token_signer == nullptr) return true;
  if (fields > 1) {
    RefuseToken(TokenRefusal::kSignatureTwice);
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
      RefuseToken(TokenRefusal::kMalformed);
      return false;
    case lockstore::SignatureCheck::kForged:
      RefuseToken(TokenRefusal::kForged);
      return false;
    case lockstore::SignatureCheck::kExpired:
      RefuseToken(TokenRefusal::kExpired);
      return false;
    case lockstore::SignatureCheck::kWrongScope:
      RefuseToken(TokenRefusal::kWrongScope);
      return false;
  }
  return false;
}

}  // namespace fencegate::gateway
