// Request fields whose names contain '_' (README "Header names with underscores"), checked
// after the framing checks and before routing: limits.headers_with_underscores drops, refuses
// or allows them; a lookalike of a framing, hop-by-hop or gateway field is refused in every
// mode.
#include "gateway/http/underscore_fields.h"
#include "gateway/session/session.h"

namespace fencegate::gateway {

bool Session::CheckUnderscoreFields() {
  std::string_view lookalike;
  const UnderscoreFinding finding = FindUnderscoreFields(parser_->get(), &lookalike);
  if (finding == UnderscoreFinding::kNone) return true;
  const UnderscoreAction action = generation_.config.limits.headers_with_underscores;
  if (finding == UnderscoreFinding::kOther && action == UnderscoreAction::kAllow) return true;
  if (finding == UnderscoreFinding::kOther && action == UnderscoreAction::kDrop) {
    context_.metrics->underscore_fields_dropped().Increment(
        static_cast<double>(DropUnderscoreFields(parser_->get())));
    return true;
  }
  context_.metrics->underscore_requests_refused().Increment();
  if (finding == UnderscoreFinding::kLookalike) {
    scratch_ = "the field name '";
    scratch_.append(lookalike);
    scratch_.append(
        "' reads as a framing, hop-by-hop or gateway field at backends that treat '_' as '-'");
  }
  // Refused before the request was routed, its body unread: the connection closes, as after
  // the framing refusals.
  Refuse({.refusal = Refusal::kUnderscoreInHeaderName,
          .detail = finding == UnderscoreFinding::kLookalike ? std::string_view(scratch_)
                                                             : std::string_view{},
          .outcome = "bad_request",
          .close = true});
  return false;
}

}  // namespace fencegate::gateway
