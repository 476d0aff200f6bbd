#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "lockstore/fence_record.h"
#include "lockstore/status.h"
#include "lockstore/token.h"

namespace fencegate::lockstore {

// Durable per-key fence state. Implementations: RocksDB (embedded default), in-memory (tests),
// and later a distributed one. The interface is asynchronous because a real store blocks
// (fsync) or waits on the network (consensus); callers must not assume callbacks run inline,
// nor that they run on the caller's thread.
class FenceStore {
 public:
  using GetCallback = std::function<void(Status, std::optional<FenceRecord>)>;
  using AdvanceCallback = std::function<void(Status, FenceRecord)>;

  virtual ~FenceStore() = default;

  // Reads the durable record of `key`: nullopt with an OK status when the key was never fenced.
  // May call back inline (a local read) or later from a store thread.
  virtual void Get(std::string_view key, GetCallback callback) = 0;

  // Raises highest(key) to `token` unless it is already >= token, and calls back once the
  // resulting record is durable (or failed, with nothing admitted). Never lowers a token.
  // Advances from many callers are group-committed. Calls back from a store thread.
  virtual void Advance(std::string_view key, Token token, std::int64_t now_ms,
                       AdvanceCallback callback) = 0;

  // Appends a refused write to the audit trail. Asynchronous and not individually synced; the
  // store keeps a bounded number of the most recent records. Assigns `sequence`.
  virtual void RecordRejection(RejectionRecord record) = 0;

  // The most recent refused writes, newest first, at most `limit`. Synchronous: for the admin
  // listener, never for a network thread.
  virtual std::vector<RejectionRecord> RecentRejections(std::size_t limit) = 0;

  // Blocks until everything accepted so far is durable. For shutdown.
  virtual Status Flush() = 0;

  // True while the store accepts operations (the readiness probe).
  virtual bool Ready() const = 0;
};

}  // namespace fencegate::lockstore
