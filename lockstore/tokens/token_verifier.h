#pragma once

#include <functional>
#include <string>

#include "lockstore/status.h"
#include "lockstore/tokens/token.h"

namespace fencegate::lockstore {

// What the lock service says about a presented token (README "Tokens", verify_tokens).
struct [[nodiscard]] TokenCheck {
  enum class Verdict {
    kHeld,         // the lock's current holder holds exactly this token: it is genuine
    kNotHeld,      // nobody holds the lock with this token right now
    kUnavailable,  // the lock service did not answer in time: nothing can be said (fail closed)
  };
  Verdict verdict = Verdict::kUnavailable;
  Status status;  // why, when kUnavailable
};

// A live check of a fencing token against the external lock service that issued it. Used only
// when an unsigned token would jump further than a route's max_token_advance, so it sits off the
// common path; the lock service is asked on the verifier's own threads, never the caller's.
class TokenVerifier {
 public:
  virtual ~TokenVerifier() = default;
  // Asks whether `token` is held on `lock_name` right now. `callback` runs exactly once: on a
  // verifier thread, or inline with kUnavailable when the check cannot even be queued.
  virtual void Verify(std::string lock_name, Token token,
                      std::function<void(TokenCheck)> callback) = 0;
};

}  // namespace fencegate::lockstore
