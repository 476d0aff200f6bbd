#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "lockstore/fence/admission.h"
#include "lockstore/fence/fence_record.h"

namespace fencegate::lockstore {

// Hands one decision to an Admit() caller exactly once: as Admit()'s return value when it was
// made before Admit() returned (a store that calls back inline), otherwise through the
// callback. So a callback never runs inside the Admit() call that registered it.
class Delivery {
 public:
  explicit Delivery(AdmissionController::Callback callback) : callback_(std::move(callback)) {}

  // Called once by whichever thread decided.
  void Deliver(const AdmissionDecision& decision) {
    early_ = decision;
    int expected = kPending;
    if (state_.compare_exchange_strong(expected, kDecidedEarly, std::memory_order_acq_rel)) return;
    callback_(decision);
  }

  // Called once by Admit() as it returns: the decision if it was already made.
  std::optional<AdmissionDecision> TakeEarly() {
    int expected = kPending;
    if (state_.compare_exchange_strong(expected, kReturned, std::memory_order_acq_rel)) {
      return std::nullopt;
    }
    return std::move(early_);
  }

 private:
  enum : int { kPending, kReturned, kDecidedEarly };
  AdmissionController::Callback callback_;
  AdmissionDecision early_;
  std::atomic<int> state_{kPending};
};

// A write that waits for its decision.
struct Waiter {
  std::shared_ptr<Delivery> delivery;
  std::string request_id;
  std::chrono::steady_clock::time_point arrived;
};

// Writes with the same token released together, once `token` is durable and no write with a
// lower token is in flight. Groups of one key are queued in increasing token order.
struct WaitGroup {
  std::uint64_t id = 0;
  Token token = 0;
  bool advancing = false;  // its writes raised the fence (a store advance was issued for it)
  bool durable = false;    // the store's highest is known to be >= token
  std::chrono::steady_clock::time_point durable_at;
  // Inline room for one: an advance usually releases a group of one write, and a heap vector
  // cost an allocation (on the network thread) and a free (on the store thread) per advance.
  boost::container::small_vector<Waiter, 1> waiters;
};

// A write that arrived while the key's durable record was being read.
struct LoadingRequest {
  Token token = 0;
  std::optional<Token> max_advance;  // see AdmissionController::Admit
  Waiter waiter;
};

// Everything the controller knows about one fence key.
//
// Invariants (all under the shard mutex):
//  - target = max(durable.highest, tokens of groups whose advance is outstanding);
//  - groups.back().token == target whenever groups is non-empty;
//  - writes in flight all carry one token (inflight_token), because a higher token is released
//    only once every lower one has completed; with no group waiting it equals target.
struct KeyState {
  bool loaded = false;
  std::vector<LoadingRequest> loading;  // until loaded

  FenceRecord durable;
  Token target = 0;
  Token inflight_token = 0;
  std::uint64_t inflight_count = 0;
  // A vector, not a deque: an empty libstdc++ deque still allocates ~600 bytes, and a key
  // rarely has more than one or two groups waiting, so erasing at the front costs nothing.
  std::vector<WaitGroup> groups;
  std::uint32_t advances_outstanding = 0;  // store callbacks that will look this state up
  std::uint64_t next_group_id = 1;
  bool repairing = false;  // an operator repair is being made durable: every write is refused

  Token last_admitted_token = 0;
  std::int64_t last_admitted_at_ms = 0;
  std::string last_admitted_request_id;

  // Nothing refers to the state but the cache: it may be dropped and re-read from the store.
  bool Idle() const {
    return loaded && inflight_count == 0 && groups.empty() && advances_outstanding == 0 &&
           !repairing;
  }
};

}  // namespace fencegate::lockstore
