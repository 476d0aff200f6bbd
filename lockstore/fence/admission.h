#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "lockstore/fence/advance_history.h"
#include "lockstore/fence/fence_store.h"
#include "lockstore/status.h"
#include "lockstore/tokens/token.h"

namespace fencegate::lockstore {

struct AdmissionOptions {
  // How many idle fence keys (no write in flight, none waiting) to keep cached in memory. Beyond
  // this, idle keys are evicted and re-read from the store on their next write, so memory is
  // bounded by configuration, not by the number of keys ever fenced.
  std::size_t max_cached_keys = 100000;
  // Number of independently locked shards of the key table; more shards, less contention.
  std::size_t shards = 64;
  // Source of wall-clock milliseconds recorded with advances (informational only). Tests inject.
  std::function<std::int64_t()> now_ms;
  // Where each durable advance is recorded for operators (the admin API's fence history); null:
  // nowhere. Fed once per advance the store makes durable, from the store's callback.
  AdvanceHistory* advance_history = nullptr;
};

// The outcome of one admission.
struct AdmissionDecision {
  enum class Kind {
    kAdmitted,     // forward the write; call Complete() when it is done
    kStale,        // token < highest: refuse with 409, never forward
    kStoreError,   // the durable advance failed: refuse with 503, nothing admitted
    kTooFarAhead,  // token > highest + max_advance: refuse, the fence is left as it was
    kRepairing,    // an operator repair of this fence is being made durable: retry shortly
  };
  Kind kind = Kind::kAdmitted;
  // The fence's highest token as of the decision. For kAdmitted it equals the presented token.
  Token highest = 0;
  // True when this write raised the fence (a durable advance happened for it or its group).
  bool advanced = false;
  // How long the write waited for earlier, lower-token writes to finish (the advance barrier).
  std::chrono::nanoseconds barrier_wait{0};
  Status status;  // the store error for kStoreError
};

// A snapshot of one fence key for operators.
struct FenceView {
  FenceRecord durable;        // as last known durable
  Token pending_advance = 0;  // a higher token being made durable right now (0: none)
  std::uint64_t writes_in_flight = 0;
  std::uint64_t writes_waiting = 0;
  Token last_admitted_token = 0;
  std::int64_t last_admitted_at_ms = 0;
  std::string last_admitted_request_id;
  bool cached = false;  // false: read from the store, no in-memory state
};

// The outcome of an operator repair (AdmissionController::Repair).
struct [[nodiscard]] RepairOutcome {
  enum class Kind {
    kRepaired,    // durable; `record` has previous_highest and sequence
    kBusy,        // writes in flight or waiting on the key (or a repair already running)
    kNotFound,    // the key was never fenced
    kNotLower,    // new_highest is not below the current highest: nothing to repair
    kStoreError,  // nothing changed
  };
  Kind kind = Kind::kRepaired;
  FenceRepairRecord record;
  std::uint64_t writes_in_flight = 0;  // for kBusy
  std::uint64_t writes_waiting = 0;
  Status status;
};

// The admission rules for fenced writes:
//  - token N on key K is admitted iff N >= highest(K), where highest includes an advance that is
//    being made durable right now (a write that arrives after a newer token was seen is stale);
//  - if N > highest(K), highest(K) := N is made durable before the write is admitted;
//  - advance barrier: a write with a higher token is admitted only after every write admitted
//    earlier for K with a lower token has completed; writes with the same token run concurrently.
// Thread-safe. Callbacks run on a store thread or on the thread that calls Complete(); the caller
// hops back to its own executor.
class AdmissionController {
 public:
  using Callback = std::function<void(const AdmissionDecision&)>;

  AdmissionController(FenceStore& store, AdmissionOptions options);
  ~AdmissionController();
  AdmissionController(const AdmissionController&) = delete;
  AdmissionController& operator=(const AdmissionController&) = delete;

  // Decides on a write of `token` to `key`. Returns the decision when it can be made at once
  // (the common case: token at the current highest, nothing older in flight), and then never
  // calls `callback`. Otherwise returns nullopt and calls `callback` exactly once later.
  // Every kAdmitted decision must be followed by exactly one Complete(key, token).
  // `max_advance`, when set, bounds how far this write may raise the fence: a token more than
  // that above the highest seen (a pending advance counts; 0 for a key never fenced) is
  // kTooFarAhead and changes nothing. A token-inflation guard, and with 0 the rule for a caller
  // that may not advance the fence at all (only writes at the current highest pass).
  std::optional<AdmissionDecision> Admit(std::string_view key, Token token,
                                         std::string_view request_id, Callback callback,
                                         std::optional<Token> max_advance = std::nullopt);

  // Reports that an admitted write finished at the backend (or failed, or was abandoned).
  void Complete(std::string_view key, Token token);

  // For the admin API. May read the store synchronously: not for network threads.
  std::optional<FenceView> Inspect(std::string_view key);

  // Lowers a fence (README "Tokens", audited by the store). Refused (kBusy) while any write is
  // in flight or waiting on the key, so no admitted write ever runs beside a lower fence; while
  // the repair is being made durable, writes on the key are refused with kRepairing. Calls
  // `callback` exactly once, inline or from a store thread.
  using RepairCallback = std::function<void(const RepairOutcome&)>;
  void Repair(FenceRepairRecord record, RepairCallback callback);

  // Drops the cached state of every idle key that `matches` (no write in flight or waiting), so
  // its next write reads the store: for a replica that takes over keys another replica may have
  // advanced meanwhile. Returns how many keys matched but were busy (kept).
  std::size_t ForgetIdle(const std::function<bool(std::string_view key)>& matches);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fencegate::lockstore
