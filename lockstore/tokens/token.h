#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace fencegate::lockstore {

// A fencing token: grows with every lock acquisition. Valid tokens are 0 .. 2^63-1 so that they
// fit every lock service's counter (etcd revisions and PostgreSQL sequences are signed 64-bit).
using Token = std::uint64_t;
inline constexpr Token kMaxToken = (Token{1} << 63) - 1;

// Parses one Fencing-Token field value. Accepts exactly 1*DIGIT (leading zeros allowed) whose
// value is at most kMaxToken, optionally surrounded by spaces/tabs (HTTP OWS). Refuses an empty
// value, a sign, hex, inner whitespace, a comma-separated list, and overflow. Detecting a
// repeated field is the caller's job: it sees the header, this sees one value.
std::optional<Token> ParseToken(std::string_view field_value);

}  // namespace fencegate::lockstore
