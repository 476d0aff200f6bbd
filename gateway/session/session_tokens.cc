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

// What each token refusal tells the client, by Session::TokenRefusal: its row of the refusal
// table, a detail when two refusals share a row, and how it is counted. 403s carry the fence
// fields.
struct TokenRefusalText {
  Refusal refusal;
  std::string_view detail, outcome;
  RejectionReason rejection;
};
constexpr std::array<TokenRefusalText, 8> kTokenRefusals = {{
    {Refusal::kUnsignedToken, {}, "unsigned_token", RejectionReason::kUnsignedToken},
    {Refusal::kInvalidTokenSignature, "the Fencing-Token-Signature header must appear exactly once",
     "invalid_token", RejectionReason::kInvalidToken},
    {Refusal::kInvalidTokenSignature, {}, "invalid_token", RejectionReason::kInvalidToken},
    {Refusal::kForgedToken, {}, "forged_token", RejectionReason::kForgedToken},
    {Refusal::kExpiredToken, {}, "expired_token", RejectionReason::kExpiredToken},
    {Refusal::kTokenScopeMismatch, {}, "token_scope", RejectionReason::kTokenScope},
    {Refusal::kTokenAdvanceTooLarge, {}, "token_advance", RejectionReason::kTokenAdvance},
    {Refusal::kTokenAdvanceTooLarge,
     "the token is more than the route's max_token_advance above the highest seen, and the live "
     "check found no such lock holder: the lock service's current holder has another token",
     "token_advance", RejectionReason::kTokenAdvance},
}};

}  // namespace

void Session::RefuseToken(TokenRefusal which) {
  const TokenRefusalText& text = kTokenRefusals[static_cast<std::size_t>(which)];
  Refuse({.refusal = text.refusal,
          .detail = text.detail,
          .outcome = text.outcome,
          .rejection = text.rejection,
          .fence_fields = RefusalText(text.refusal).status == 403});
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
      std::move(lock_name), *fenced_.token(),
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
      Refuse({.refusal = Refusal::kTokenVerificationUnavailable,
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
                                    *fenced_.token(), fenced_.fence_key(), NowUnixMs());
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
