#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstore/fence/fence_record.h"
#include "lockstore/fence/fence_repair.h"
#include "lockstore/fence/rejection_query.h"
#include "lockstore/status.h"
#include "lockstore/tokens/token.h"

namespace fencegate::lockstore {

// Durable per-key fence state. Implementations: RocksDB (embedded default), in-memory (tests),
// and later a distributed one. The interface is asynchronous because a real store blocks
// (fsync) or waits on the network (consensus); callers must not assume callbacks run inline,
// nor that they run on the caller's thread.
class FenceStore {
 public:
  using GetCallback = std::function<void(Status, std::optional<FenceRecord>)>;
  using AdvanceCallback = std::function<void(Status, FenceRecord)>;
  using RepairCallback = std::function<void(Status, FenceRepairRecord)>;

  virtual ~FenceStore() = default;

  // Reads the durable record of `key`: nullopt with an OK status when the key was never fenced.
  // May call back inline (a local read) or later from a store thread.
  virtual void Get(std::string_view key, GetCallback callback) = 0;

  // The result of Get(), returned by ReadLocal().
  struct [[nodiscard]] LocalRead {
    Status status;
    std::optional<FenceRecord> record;
  };

  // Get() on the calling thread, for a store whose reads never wait on anything but local
  // memory and disk (no fsync, no network): the admission of a key that is not cached then
  // needs no callback. nullopt: this store reads asynchronously; use Get().
  virtual std::optional<LocalRead> ReadLocal(std::string_view /*key*/) { return std::nullopt; }

  // Raises highest(key) to `token` unless it is already >= token, and calls back once the
  // resulting record is durable (or failed, with nothing admitted). Never lowers a token.
  // Advances from many callers are group-committed. Calls back from a store thread.
  virtual void Advance(std::string_view key, Token token, std::int64_t now_ms,
                       AdvanceCallback callback) = 0;

  // Sets highest(record.fence_key) to record.new_highest and appends `record` (with
  // previous_highest and sequence filled in) to the repair audit, in one synced write; calls
  // back from a store thread. NotFound for a key never fenced; InvalidArgument (nothing
  // written) unless new_highest is below the stored highest. The only operation that lowers a
  // fence: the caller (AdmissionController::Repair) makes sure no write is in flight on it.
  virtual void Repair(FenceRepairRecord record, RepairCallback callback) = 0;

  // The most recent repairs, newest first. Synchronous: for the admin listener.
  virtual std::vector<FenceRepairRecord> RecentRepairs(std::size_t limit) = 0;

  // Appends a refused write to the audit trail. Asynchronous and not individually synced; the
  // store keeps a bounded number of the most recent records. Assigns `sequence`.
  virtual void RecordRejection(RejectionRecord record) = 0;

  // The most recent refused writes, newest first, at most `limit`. Synchronous: for the admin
  // listener, never for a network thread.
  virtual std::vector<RejectionRecord> RecentRejections(std::size_t limit) = 0;

  // The refused writes that match `query`, newest first (RejectionQuery). Synchronous: for the
  // admin listener. The scan is bounded by the trail's retention.
  virtual RejectionPage QueryRejections(const RejectionQuery& query) = 0;

  // One page of the stored fences in key order: keys starting with `prefix` and above `after`
  // (exclusive; empty: from the first), at most `limit`. A range scan of the store, never a load
  // of every fence. Synchronous: for the admin listener, never for a network thread.
  virtual Status ListFences(std::string_view prefix, std::string_view after, std::size_t limit,
                            FencePage* page) = 0;

  // Blocks until everything accepted so far is durable. For shutdown.
  virtual Status Flush() = 0;

  // True while the store accepts operations (the readiness probe).
  virtual bool Ready() const = 0;

  // Route bindings: route name -> what its fence keys are made of (its fence-key template and
  // backend), kept with the fences so that a gateway noticing a change of them at start-up or
  // reload can refuse it (a changed template gives every resource a fresh fence, with no history
  // to refuse a zombie's write). Synchronous: start-up and reload only, never a network thread.
  virtual Status ReadRouteBindings(std::map<std::string, std::string>* out) = 0;
  // Adds or replaces the given routes' bindings durably; others stay as recorded.
  virtual Status WriteRouteBindings(const std::map<std::string, std::string>& bindings) = 0;
  // Whether any fence key starts with `prefix` ("" : any fence). Synchronous, as above.
  virtual Status HasFenceWithPrefix(std::string_view prefix, bool* found) = 0;
};

}  // namespace fencegate::lockstore
