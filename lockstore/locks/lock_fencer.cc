#include "lockstore/locks/lock_fencer.h"

#include <memory>
#include <mutex>

namespace fencegate::lockstore {

void AdmissionLockFencer::Raise(std::string_view lock, const std::vector<std::string>& keys,
                                Token token, Callback callback) {
  if (keys.empty()) {
    callback({});
    return;
  }
  // Shared by the per-key decisions, which may arrive on different threads.
  struct Pending {
    std::mutex mu;
    std::size_t remaining;
    FenceOutcome outcome;
    Callback callback;
  };
  auto pending = std::make_shared<Pending>();
  pending->remaining = keys.size();
  pending->callback = std::move(callback);
  for (const std::string& key : keys) pending->outcome.fences.push_back({key, false, 0});

  const std::string request_id = "lock:" + std::string(lock);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto decide = [this, pending, i, token](const AdmissionDecision& decision) {
      if (decision.kind == AdmissionDecision::Kind::kAdmitted) {
        // Nothing is forwarded for a lock grant: the "write" completes at once.
        admission_.Complete(pending->outcome.fences[i].key, token);
      }
      bool last = false;
      {
        std::lock_guard lock(pending->mu);
        FenceRaise& raise = pending->outcome.fences[i];
        raise.raised = decision.kind == AdmissionDecision::Kind::kAdmitted;
        raise.highest = decision.highest;
        if (decision.kind == AdmissionDecision::Kind::kStoreError) {
          pending->outcome.status = decision.status;
        } else if (decision.kind == AdmissionDecision::Kind::kRepairing) {
          // The fence cannot be raised right now: fail the grant rather than hand out a token
          // whose fence was not raised.
          pending->outcome.status = Status::Unavailable("a repair of this fence is in progress");
        }
        last = --pending->remaining == 0;
      }
      if (last) pending->callback(std::move(pending->outcome));
    };
    auto now = admission_.Admit(keys[i], token, request_id, decide);
    if (now) decide(*now);
  }
}

}  // namespace fencegate::lockstore
