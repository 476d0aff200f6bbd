#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "lockstore/status.h"

namespace fencegate::lockstore {

// What the idempotency store keeps for one scoped key. No HTTP here: the gateway's response
// is opaque bytes (`response`), encoded and decoded by the gateway.
struct IdempotencyRecord {
  enum class State : std::uint8_t {
    // The request was (or is being) forwarded and no outcome is known yet. Written durably
    // before forwarding, so a crash leaves it behind instead of nothing.
    kInFlight = 1,
    // The backend answered; `response` holds what it answered (replayed to retries).
    kCompleted = 2,
    // The request may have been applied but its answer is not kept: the response was larger
    // than the route's limit, the backend exchange broke after sending, or the gateway died
    // while it was in flight (an in-flight marker of an older run). Retries are refused.
    kUnknown = 3,
  };

  State state = State::kInFlight;
  // The store epoch (one per open of the store) that wrote an in-flight marker; a marker of
  // another epoch was left behind by a gateway that stopped, so nobody will finish it.
  std::uint64_t epoch = 0;
  std::int64_t created_ms = 0;        // wall clock, for operators and the expiry
  std::int64_t expires_ms = 0;        // after this (wall clock) the key may be used afresh
  std::uint32_t upstream_status = 0;  // the backend's status when known (kCompleted, kUnknown)
  std::string request_digest;         // SHA-256 of method and target (the fingerprint's head)
  std::string body_digest;            // SHA-256 of the request body; empty while in flight
  std::string response;               // opaque; kCompleted only
};

// Value layout: a format byte, the state byte, epoch (u64), created_ms, expires_ms (i64),
// upstream_status (u32), then each string as a varint32 length and its bytes.
std::string EncodeIdempotencyRecord(const IdempotencyRecord& record);
Status DecodeIdempotencyRecord(std::string_view value, IdempotencyRecord* record);

}  // namespace fencegate::lockstore
