#pragma once

#include <optional>
#include <string_view>

#include "gateway/http/refusal.h"
#include "gateway/observability/metrics.h"

namespace fencegate::gateway {

// What a refusal looks like to the client and to operators: the row of the refusal table
// (gateway/http/refusal.h) and what the session adds to it. Views only: a literal, or text the
// refusing side keeps until the answer is written.
struct RefusalReply {
  Refusal refusal = Refusal::kBadRequest;
  std::string_view detail{};  // the table's when empty
  std::string_view outcome{};
  // Set for refused fenced writes: counted, logged and kept in the audit trail.
  std::optional<RejectionReason> rejection{};
  std::string_view audit_reason{};  // reason kept in the audit trail when not `rejection`'s
  bool close = false;               // framing is unreliable: close after answering
  bool retry_after = false;
  bool fence_fields = false;            // add fence_key/presented/highest to the problem
  std::string_view www_authenticate{};  // a 401's challenge
  std::string_view reason{};            // the problem's reason when not `rejection`'s
};

}  // namespace fencegate::gateway
