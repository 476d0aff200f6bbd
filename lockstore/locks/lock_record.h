#pragma once

#include <cstdint>
#include <string>

#include "lockstore/tokens/token.h"

namespace fencegate::lockstore {

// The durable state of one named lock (column family "locks", keyed by the lock name).
struct LockRecord {
  enum class State : std::uint8_t {
    kFree = 0,         // nobody holds it
    kHeld = 1,         // granted to the owner whose hashed token is owner_hash
    kQuarantined = 2,  // the last lease expired without release; lock-delay applies
  };
  std::string name;
  // The highest fencing token ever issued for this lock (grants and forced releases). The next
  // grant gets last_token + 1, so a token is never issued twice, restarts included.
  Token last_token = 0;
  State state = State::kFree;
  // For kHeld: SHA-256 of the owner token (hex); the token itself is never stored.
  std::string owner_hash;
  std::int64_t ttl_ms = 0;               // for kHeld: the lease length
  std::int64_t acquired_at_unix_ms = 0;  // for kHeld: informational
};

// One administrative forced release (column family "lock_audit", keyed by sequence).
struct LockAuditRecord {
  std::uint64_t sequence = 0;  // assigned by the store, increasing
  std::int64_t at_unix_ms = 0;
  std::string lock;
  std::string operator_id;
  std::string reason;
  std::string previous_owner_id;  // truncated hash of the previous holder's owner token
  Token previous_token = 0;       // the previous holder's fencing token
  Token fence_token = 0;          // the token the lock's fences were raised to
};

}  // namespace fencegate::lockstore
