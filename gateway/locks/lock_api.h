#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <boost/beast/http/verb.hpp>

#include "gateway/config/config.h"
#include "gateway/events/event_hub.h"
#include "gateway/http/refusal.h"
#include "lockstore/locks/lock_service.h"
#include "lockstore/locks/token_signer.h"

namespace fencegate::gateway {

// What the lock API answers; the session writes it.
struct LockHttpResponse {
  unsigned status = 200;
  std::string_view content_type;
  std::string body;
  std::chrono::seconds retry_after{0};  // Retry-After when > 0
};

// The built-in lock API on the traffic listener, under locks.prefix (README "Built-in locks"):
//   POST {prefix}{name}          acquire   {"ttl_ms": N, "wait_ms": N}   (both optional)
//   POST {prefix}{name}/renew    renew     {"owner_token": "..."}
//   POST {prefix}{name}/release  release   {"owner_token": "..."}
//   GET  {prefix}{name}          state (holder's fencing token, expiry, waiters; no owner)
// Maps HTTP onto a lockstore::LockService and nothing else: no socket, no session state. The
// answers are the same whichever service backs it (the embedded table or etcd).
class LockApi {
 public:
  using Done = std::function<void(LockHttpResponse)>;

  // `signer` (may be null) adds fencing_token_signature to grants and renewals; `events` (may be
  // null) hears of every grant, for the console's live feed.
  LockApi(lockstore::LockService& table, const LocksConfig& config,
          const lockstore::TokenSigner* signer, EventHub* events = nullptr)
      : table_(table), config_(config), signer_(signer), events_(events) {}

  bool Matches(std::string_view path) const {
    return config_.enabled && path.starts_with(config_.prefix);
  }
  std::string_view prefix() const { return config_.prefix; }

  // A request whose answer may come later (a long-poll acquire): cancel it with CancelWait if
  // the client goes away. `waiter` is 0 when there is nothing to cancel.
  struct Wait {
    std::string lock;
    std::uint64_t waiter = 0;
  };

  // Handles one request. Calls `done` exactly once, from any thread (possibly inline).
  Wait Handle(boost::beast::http::verb method, std::string_view path, std::string_view body,
              std::string_view request_id, Done done);
  void CancelWait(const Wait& wait) { table_.CancelWait(wait.lock, wait.waiter); }

 private:
  Wait Acquire(const std::string& name, std::string_view path, std::string_view body,
               std::string request_id, Done done);
  void Renew(const std::string& name, std::string_view path, std::string_view body,
             std::string_view request_id, Done done);
  void Release(const std::string& name, std::string_view path, std::string_view body,
               std::string_view request_id, Done done);
  void State(const std::string& name, Done done);

  lockstore::LockService& table_;
  const LocksConfig& config_;
  const lockstore::TokenSigner* signer_;
  EventHub* events_;
};

// A problem+json response (the lock API's and the admin lock endpoints' errors).
// `detail` empty: the refusal table's.
LockHttpResponse LockProblem(Refusal refusal, std::string_view detail, std::string_view instance,
                             std::string_view request_id);

}  // namespace fencegate::gateway
