#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "lockstore/etcd/etcd_client.h"
#include "lockstore/fence/fence_store.h"
#include "lockstore/log_sink.h"

namespace fencegate::lockstore::etcd {

struct EtcdFenceStoreOptions {
  EtcdClientOptions client;
  // Every key the store writes starts with this: "<prefix>fences/<fence key>".
  std::string prefix = "/fencegate/";
  // Threads for repairs, each with its own synchronous client (advances and reads take none;
  // repairs are rare operator calls).
  std::size_t threads = 1;
  // Keep-alive connections to each member for the advance and read transactions, which run on
  // an asynchronous client (EtcdAsyncClient): one transaction in flight per connection (one
  // advance transaction at a time unless a whole max_txn_ops of advances waits; reads alike).
  std::size_t connections_per_member = 4;
  // Fence keys in one advance transaction at most: etcd's --max-txn-ops (default 128) bounds
  // the compares, the puts and the reads of a transaction each. A larger batch is split into
  // several transactions in flight at once.
  std::size_t max_txn_ops = 128;
  // How often the readiness probe reads from etcd (a linearizable read needs a quorum).
  std::chrono::milliseconds probe_interval{1000};
  // Refused writes kept in memory for /admin/rejections (this replica's only).
  std::size_t rejection_retention = 10000;
  // Health changes (lost quorum, back), one line per call, from the store's threads.
  LogSink log;
};

// A FenceStore on etcd v3. Records live at "<prefix>fences/<key>" with the value
// EncodeEtcdFence(): the token as 16 hex digits, so etcd's byte order is numeric order, then
// ":" and the advance's wall-clock milliseconds (informational). Advances are group-committed:
// those that arrive while an advance transaction is in flight go into the next one, one compare
// on the key's last seen mod_revision and one put per key (CommitEtcdAdvances in
// etcd_advance_batch.h), so in steady state a batch costs one round trip, first writes
// included; a key whose compare fails (another replica wrote it) is read in the same
// transaction and retried. Two replicas can never lower a fence or both advance past each
// other, and a transaction is retried on another member after a timeout. Every read is
// linearizable; the reads of fences that arrive while a read transaction is in flight share the
// next one (ReadEtcdFences). Advance and read transactions run on an EtcdAsyncClient (a pool of
// keep-alive connections per member), so no thread waits on them and their callbacks come from
// that client's thread; repairs and the admin reads use synchronous clients. Without a quorum
// every operation fails Unavailable after the client's operation timeout: the gateway refuses
// with 503.
class EtcdFenceStore final : public FenceStore {
 public:
  struct Stats {
    std::uint64_t round_trips = 0;       // answered HTTP exchanges with etcd
    std::uint64_t failovers = 0;         // switches to another member
    std::uint64_t errors = 0;            // failed attempts
    std::uint64_t tls_failures = 0;      // TLS handshakes with a member refused
    std::uint64_t txn_conflicts = 0;     // keys whose compare failed (written elsewhere meanwhile)
    std::uint64_t advances = 0;          // keys written with a higher token
    std::uint64_t advance_requests = 0;  // advances handed to the store
    std::uint64_t advance_txns = 0;      // etcd transactions that carried them, retries included
    std::uint64_t open_connections = 0;  // of the asynchronous client, now
    std::uint64_t in_flight_high_water = 0;  // its most transactions in flight at once
  };

  static Status Open(const EtcdFenceStoreOptions& options, std::unique_ptr<EtcdFenceStore>* out);
  ~EtcdFenceStore() override;

  void Get(std::string_view key, GetCallback callback) override;
  void Advance(std::string_view key, Token token, std::int64_t now_ms,
               AdvanceCallback callback) override;
  // One transaction: the fence (if its mod_revision is still the one read) and the audit record
  // "<prefix>repairs/<revision read>" together; the record's sequence is its etcd mod_revision.
  void Repair(FenceRepairRecord record, RepairCallback callback) override;
  std::vector<FenceRepairRecord> RecentRepairs(std::size_t limit) override;
  void RecordRejection(RejectionRecord record) override;
  std::vector<RejectionRecord> RecentRejections(std::size_t limit) override;
  // This replica's refusals only, like RecentRejections.
  RejectionPage QueryRejections(const RejectionQuery& query) override;
  // One etcd range request with a limit.
  Status ListFences(std::string_view prefix, std::string_view after, std::size_t limit,
                    FencePage* page) override;
  // Waits until every queued operation has called back.
  Status Flush() override;
  bool Ready() const override;
  // "<prefix>routes/<route name>" -> binding text.
  Status ReadRouteBindings(std::map<std::string, std::string>* out) override;
  Status WriteRouteBindings(const std::map<std::string, std::string>& bindings) override;
  Status HasFenceWithPrefix(std::string_view prefix, bool* found) override;

  Stats stats() const;
  // Refuses new operations (Unavailable), lets queued ones finish, and stops the threads.
  // Idempotent.
  void Close();

 private:
  class Impl;
  explicit EtcdFenceStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The fence value format (exposed for tests).
std::string EncodeEtcdFence(Token token, std::int64_t advanced_at_ms);
std::string EncodeEtcdTokenPrefix(Token token);
[[nodiscard]] bool DecodeEtcdFence(std::string_view value, FenceRecord* out);

}  // namespace fencegate::lockstore::etcd
