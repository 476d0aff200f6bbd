#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <boost/beast/http/message.hpp>

#include "base/net/http_header.h"

namespace fencegate::adapters {

// The client's preconditions on the current version of a file (RFC 9110 13.1).
struct ClientConditions {
  std::optional<std::string> if_match;
  std::optional<std::string> if_none_match;

  static ClientConditions FromHeader(const RequestHeader& header);
};

// If-Match (strong comparison; "*" matches any existing file). `current_etag` is null when the
// file does not exist.
bool IfMatchHolds(std::string_view if_match, const std::string* current_etag);

// True when If-None-Match matches (weak comparison; "*" matches any existing file), i.e. the
// condition fails.
bool IfNoneMatchMatches(std::string_view if_none_match, const std::string* current_etag);

enum class ReadDecision { kServe, kNotModified, kPreconditionFailed };

// GET/HEAD of an existing file whose ETag is `etag`.
ReadDecision DecideRead(const ClientConditions& conditions, const std::string& etag);

// PUT/DELETE: whether the preconditions hold for the current file (null: none exists).
bool WriteConditionsHold(const ClientConditions& conditions, const std::string* current_etag);

}  // namespace fencegate::adapters
