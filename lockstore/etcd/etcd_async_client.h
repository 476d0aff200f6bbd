#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstore/etcd/etcd_client.h"
#include "lockstore/status.h"

namespace fencegate::lockstore::etcd {

// What the asynchronous client reports about its connections and requests (a snapshot).
struct EtcdAsyncClientStats {
  std::size_t open_connections = 0;      // connected to a member now
  std::size_t in_flight = 0;             // attempts started and not answered yet
  std::size_t in_flight_high_water = 0;  // the most attempts in flight at once so far
  std::size_t waiting = 0;               // operations waiting for a free connection
  std::string preferred_endpoint;        // the member the next request goes to
  std::size_t leaders_found = 0;         // times the leader was found among the endpoints
};

// An asynchronous client of etcd v3's HTTP/JSON gateway, with the wire format and the retry rule
// of the synchronous EtcdClient: a failed attempt (refused, timed out, 5xx, etcd "unavailable")
// moves to the next member; reads and operations flagged idempotent are retried there until
// operation_timeout, others only when the request never reached a member.
//
// It runs its own io_context thread with a pool of up to `connections_per_member` keep-alive
// HTTP/1.1 connections (TLS when options.tls_context is set) to each member, one request in
// flight per connection, so several requests overlap and no caller's thread waits on etcd.
// Requests go to one preferred member: the leader when the client found it among the endpoints
// (asked at the start and after each failover: a follower would forward every request to it),
// otherwise the one that last answered; after a failure there the next member becomes
// preferred. Operations wait in order for a free connection of the preferred member.
//
// Callbacks run on the client's thread, once each, and must not block: another callback waits
// behind them. After Close() (or destruction) every operation still queued or in flight has
// been called back Unavailable, and new ones are at once.
class EtcdAsyncClient {
 public:
  using TxnCallback = std::function<void(Status, EtcdTxnResult)>;
  using GetCallback = std::function<void(Status, std::optional<EtcdKeyValue>)>;

  EtcdAsyncClient(EtcdClientOptions options, std::shared_ptr<EtcdClientCounters> counters,
                  std::size_t connections_per_member);
  ~EtcdAsyncClient();
  EtcdAsyncClient(const EtcdAsyncClient&) = delete;
  EtcdAsyncClient& operator=(const EtcdAsyncClient&) = delete;

  // A linearizable read of one key: nullopt when absent.
  void Get(std::string_view key, GetCallback callback);
  // `idempotent` as EtcdClient::Txn.
  void Txn(const std::vector<EtcdCompare>& compares, const std::vector<EtcdOp>& success,
           const std::vector<EtcdOp>& failure, bool idempotent, TxnCallback callback);

  EtcdAsyncClientStats stats() const;
  // Fails what is queued or in flight Unavailable, closes the connections and joins the
  // thread. Idempotent; not from a callback.
  void Close();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fencegate::lockstore::etcd
