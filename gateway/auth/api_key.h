#pragma once

#include <optional>
#include <string_view>

#include "gateway/auth/auth_config.h"

namespace fencegate::gateway::auth {

// SHA-256 of `key` (the same bytes `printf %s KEY | sha256sum` hashes).
KeyDigest DigestApiKey(std::string_view key);

// 64 hex digits (either case) -> digest; false for anything else.
bool ParseKeyDigestHex(std::string_view hex, KeyDigest* out);

// Equal digests, compared in time independent of where they differ.
bool DigestsEqual(const KeyDigest& a, const KeyDigest& b);

// The credential of an `Authorization: Bearer <token>` field value (RFC 6750 section 2.1: the
// scheme is case-insensitive, the token is b64token); nullopt for any other form or scheme.
std::optional<std::string_view> ParseBearer(std::string_view field);

}  // namespace fencegate::gateway::auth
