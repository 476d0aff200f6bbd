#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/net/http_header.h"

namespace fencegate::gateway {

// The pieces of the Idempotency-Key semantics (IETF httpapi draft-07, README "Idempotency
// keys") that need no session: key syntax, digests, the store key and the stored response.

inline constexpr std::size_t kMaxIdempotencyKeyLength = 255;
// Published on every response of a key-carrying request: when the key may be used afresh.
inline constexpr std::string_view kIdempotencyExpiresField = "Idempotency-Expires";
// Set on a response that was replayed from the store rather than produced by the backend.
inline constexpr std::string_view kIdempotencyReplayedField = "Idempotency-Replayed";

// Parses an Idempotency-Key field value: the draft's sf-string ("..."; \" and \\ escapes), or,
// as many clients send it, a bare run of visible ASCII. 1..255 characters, else false.
bool ParseIdempotencyKey(std::string_view value, std::string* key);

// SHA-256 of method and request target: the fingerprint's part known from the header.
std::string RequestDigest(std::string_view method, std::string_view target);

// The store key: route, fence key, client identity and the client's key, each length-prefixed
// so no two different tuples share a key.
std::string IdempotencyScopeKey(std::string_view route, std::string_view fence_key,
                                std::string_view identity, std::string_view key);

// Mode `forward`: the key sent to a backend that deduplicates by itself. Hex SHA-256 of the
// route, fence key and client key, so one client key under two fence keys (or routes) never
// collides at the backend, and the client's raw key is not disclosed.
std::string DeriveForwardKey(std::string_view route, std::string_view fence_key,
                             std::string_view key);

// "Sun, 06 Nov 1994 08:49:37 GMT" (RFC 9110 IMF-fixdate) of Unix milliseconds.
std::string HttpDate(std::int64_t unix_ms);

// A backend response as kept in the store (opaque bytes to lockstore/).
struct StoredResponse {
  unsigned status = 200;
  adapters::Fields fields;
  std::string body;
};

// Whether `name` is kept with a stored response: framing, connection and per-exchange fields
// are not (they are produced afresh when replayed).
bool IsStoredResponseField(std::string_view name);
std::string EncodeStoredResponse(const StoredResponse& response);
bool DecodeStoredResponse(std::string_view bytes, StoredResponse* response);

}  // namespace fencegate::gateway
