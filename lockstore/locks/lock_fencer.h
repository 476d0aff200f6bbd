#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstore/fence/admission.h"
#include "lockstore/status.h"
#include "lockstore/tokens/token.h"

namespace fencegate::lockstore {

// The result of raising one fence key for a lock.
struct FenceRaise {
  std::string key;
  bool raised = false;  // the fence now stands at the lock's token
  Token highest = 0;    // the fence's highest token afterwards (> token when not raised)
};

struct [[nodiscard]] FenceOutcome {
  Status status;  // a store error: the fences may not all be durable
  std::vector<FenceRaise> fences;
};

// Eager fencing: raises the fence keys bound to a lock to the lock's new token before the grant
// is answered, so the previous holder's writes are refused from that moment on.
class LockFencer {
 public:
  using Callback = std::function<void(FenceOutcome)>;
  virtual ~LockFencer() = default;
  // Calls back exactly once, from any thread, possibly inline.
  virtual void Raise(std::string_view lock, const std::vector<std::string>& keys, Token token,
                     Callback callback) = 0;
};

// Raises fences through the admission controller, as a write with the lock's token would: the
// advance is durable before the callback, and writes older than the token that are still in
// flight at the backend finish first (the advance barrier), so the new holder starts on a
// resource the old holder no longer touches.
class AdmissionLockFencer final : public LockFencer {
 public:
  explicit AdmissionLockFencer(AdmissionController& admission) : admission_(admission) {}
  void Raise(std::string_view lock, const std::vector<std::string>& keys, Token token,
             Callback callback) override;

 private:
  AdmissionController& admission_;
};

}  // namespace fencegate::lockstore
