#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lockstore/etcd/etcd_async_client.h"
#include "lockstore/fence/fence_store.h"

namespace fencegate::lockstore::etcd {

// One read of a fence waiting for its etcd transaction.
struct EtcdFenceRead {
  std::string key;  // the fence key (without the store's prefix)
  FenceStore::GetCallback callback;
};

// One advance waiting for its etcd transaction.
struct EtcdAdvance {
  std::string key;  // the fence key (without the store's prefix)
  Token token = 0;
  std::int64_t now_ms = 0;
  FenceStore::AdvanceCallback callback;
};

// A fence record as the store last wrote or read it in etcd, with the etcd mod_revision it had
// then. Transactions compare against it, so a stale entry (another replica wrote the key, or a
// repair did) costs one more round trip, never a wrong answer.
struct EtcdFenceSeen {
  std::int64_t mod_revision = 0;
  FenceRecord record;
};

// The fence records seen, per etcd key; a key not in it is believed absent. Thread-safe:
// batches in flight together share it (each key is in one batch at a time).
class EtcdFenceSeenCache {
 public:
  std::optional<EtcdFenceSeen> Find(const std::string& etcd_key) const;
  // Keeps whichever of `seen` and the entry already there has the higher mod_revision: a read
  // answered after a later write must not make the cache older.
  void Remember(const std::string& etcd_key, const EtcdFenceSeen& seen);
  void Forget(const std::string& etcd_key);

 private:
  // Bounded memory: past this many keys the cache starts again empty (each forgotten key then
  // costs one extra round trip at its next advance).
  static constexpr std::size_t kLimit = 65536;
  mutable std::mutex mu_;
  std::unordered_map<std::string, EtcdFenceSeen> seen_;
};

struct EtcdAdvanceCounters {
  std::atomic<std::uint64_t> requested{0};  // advances handed to the store
  std::atomic<std::uint64_t> txns{0};       // etcd transactions that carried them, retries too
  std::atomic<std::uint64_t> conflicts{0};  // keys whose compare failed (the cache was stale)
  std::atomic<std::uint64_t> written{0};    // keys written with a higher token
};

// Called once a batch's transactions ended and every operation in it was called back, with
// the first failure (for the store's readiness), Ok otherwise.
using EtcdBatchDone = std::function<void(Status)>;

// Reads a batch of fences (at most etcd's --max-txn-ops) in one transaction of range operations,
// a single linearizable read, calls every read back, and remembers what it read in `cache` (the
// next advance of a key read first then compares against the right revision at once). `cache`
// must outlive the call (the store closes `client` before it goes).
void ReadEtcdFences(EtcdAsyncClient& client, std::string fences_prefix, EtcdFenceSeenCache& cache,
                    std::vector<EtcdFenceRead> batch, EtcdBatchDone done);

// Commits one batch of advances (keys at most etcd's --max-txn-ops, none of them in another
// batch) and calls every advance back. Advances of one key fold to the highest token and all
// get the resulting record. Each round is one transaction over the batch's unresolved keys:
//   compare  mod_revision(key) == seen  (create_revision(key) == 0 for a key believed absent)
//   success  put the folded token, for each key whose token is above the seen record
//   failure  range every key
// A success confirms or raises every key at once. A failure writes nothing: its reads refresh
// the cache, a key already at or above its token is answered from them (a linearizable read),
// and the others go into the next round. A transaction that fails (no quorum, timeout) fails
// every advance still in it with its status: none is acknowledged unless its round committed.
// The rounds run as continuations on the client's thread; `cache` and `counters` must outlive
// them.
void CommitEtcdAdvances(EtcdAsyncClient& client, std::string fences_prefix,
                        EtcdFenceSeenCache& cache, std::vector<EtcdAdvance> batch,
                        EtcdAdvanceCounters& counters, EtcdBatchDone done);

}  // namespace fencegate::lockstore::etcd
