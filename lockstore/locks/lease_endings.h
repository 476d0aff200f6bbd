#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "lockstore/tokens/token.h"

namespace fencegate::lockstore {

// Why a fencing token the fence refused is stale (docs/LOCKS_AND_TOKENS.md "Why a token is stale"):
// the difference Kafka's KIP-588 draws between "another holder fenced you" and "your own lease ran
// out".
enum class StaleReason : std::uint8_t {
  kSuperseded,     // a higher token was written or granted (also: nothing more is known)
  kLeaseExpired,   // the lock API's lease of this token ran out without a release
  kForceReleased,  // an operator took the lock away (the audit record says who and why)
  kReleased,       // the holder released the lock itself
};

// "superseded", "lease-expired", "force-released", "released".
std::string_view StaleReasonName(StaleReason reason);

struct StaleTokenExplanation {
  StaleReason reason = StaleReason::kSuperseded;
  // kForceReleased: the lock-audit record's sequence (0: not yet known).
  std::uint64_t audit_id = 0;
};

// How the last leases of each lock ended, by token, and which lock's grants raise each fence key.
// A token counts as the lock API's for a fence key only when both hold: a grant of lock L raised
// the key, and L issued that very token and its lease ended. Anything else (tokens from another
// lock service, a lock forgotten after a restart or evicted from memory) is explained as
// superseded. Bounded: kKeptEndings per lock, and a lock's entries go when the lock leaves the
// table's memory. Not thread-safe: LockTable calls it under its mutex.
class LeaseEndings {
 public:
  static constexpr std::size_t kKeptEndings = 16;

  // A grant of `lock` raised `keys` (the lock's rendered fence keys).
  void BindFenceKeys(std::string_view lock, const std::vector<std::string>& keys);
  // The lease of `token` on `lock` ended for `reason`.
  void Ended(std::string_view lock, Token token, StaleReason reason);
  // The forced release of `token` on `lock` got its audit record `audit_id`.
  void SetAuditId(std::string_view lock, Token token, std::uint64_t audit_id);
  // `lock` left memory: its endings and the fence keys bound to it are forgotten.
  void Forget(std::string_view lock);

  // Why `token`, refused on `fence_key`, is stale as far as the lock API knows.
  StaleTokenExplanation Explain(std::string_view fence_key, Token token) const;

 private:
  struct Ending {
    Token token = 0;
    StaleTokenExplanation explanation;
  };
  struct LockEndings {
    std::deque<Ending> endings;  // oldest first
    std::vector<std::string> fence_keys;
  };
  std::map<std::string, LockEndings, std::less<>> locks_;
  std::map<std::string, std::string, std::less<>> lock_of_fence_key_;
};

}  // namespace fencegate::lockstore
