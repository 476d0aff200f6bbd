#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lockstore/tokens/token.h"

namespace fencegate::gateway {

// An RFC 9457 problem document. Views only: the caller owns the strings for the duration of
// the rendering call.
struct ProblemDetails {
  unsigned status = 500;
  std::string_view slug{};  // the type URI is "https://fencegate.dev/problems/<slug>"
  std::string_view title{};
  std::string_view detail{};
  std::string_view instance{};  // the request path
  std::string_view request_id{};
  // Fence fields, rendered only when relevant to the refusal.
  std::string_view reason{};     // e.g. "stale_token"; omitted when empty
  std::string_view fence_key{};  // omitted when empty
  std::optional<lockstore::Token> presented_token{};
  std::optional<lockstore::Token> highest_token{};
  // A stale-token refusal: why the token is stale (lockstore::StaleReasonName), and for a forced
  // release the lock-audit record's sequence.
  std::string_view stale_reason{};
  std::optional<std::uint64_t> audit_id{};
};

inline constexpr std::string_view kProblemContentType = "application/problem+json";
inline constexpr std::string_view kProblemTypePrefix = "https://fencegate.dev/problems/";

// Renders `problem` as compact JSON into `out` (cleared first).
void RenderProblemJson(const ProblemDetails& problem, std::string* out);

}  // namespace fencegate::gateway
