#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fencegate::encoding {

// Decodes the %XX escapes of `text` (RFC 3986 section 2.1); nullopt when a '%' is not followed
// by two hex digits. '+' stays '+' and every other byte, NUL included, passes as it is: callers
// apply their own rules to what comes out. Paths on the request hot path are checked and
// canonicalised by gateway/http/path_canonical instead, which refuses more than a bad escape.
std::optional<std::string> PercentDecode(std::string_view text);

}  // namespace fencegate::encoding
