#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/ssl/context.hpp>

#include "base/tls_client/client_tls.h"
#include "lockstore/status.h"

namespace fencegate::lockstore::etcd {

struct EtcdClientOptions {
  // Members' client addresses, "host:port": plain HTTP, or HTTPS when `tls` is set.
  std::vector<std::string> endpoints;
  // TLS to every member: what is trusted and presented (server_name empty: the endpoint's host).
  std::optional<tls_client::ClientTlsOptions> tls;
  // Built from `tls` once per store by EtcdFenceStore::Open (or the caller) and shared by every
  // client: one file read, and sessions across connections.
  std::shared_ptr<boost::asio::ssl::context> tls_context;
  // One attempt on one member: connect, send, and the whole answer.
  std::chrono::milliseconds request_timeout{1000};
  // Every attempt of one operation across members. After it the operation fails Unavailable:
  // no quorum answered, so the caller fails closed.
  std::chrono::milliseconds operation_timeout{3000};
};

// Counters shared by every client of one store; monotonic.
struct EtcdClientCounters {
  std::atomic<std::uint64_t> round_trips{0};   // HTTP exchanges that got an answer
  std::atomic<std::uint64_t> failovers{0};     // switches to another member after a failure
  std::atomic<std::uint64_t> errors{0};        // attempts that failed (timeout, refused, 5xx)
  std::atomic<std::uint64_t> tls_failures{0};  // TLS handshakes refused (certificate, name, CA)
};

struct EtcdKeyValue {
  std::string key;
  std::string value;
  std::int64_t create_revision = 0;
  std::int64_t mod_revision = 0;
  std::int64_t lease = 0;
};

// One comparison of an etcd transaction.
struct EtcdCompare {
  enum class Target { kValue, kCreateRevision, kModRevision, kLease };
  enum class Result { kEqual, kNotEqual, kLess, kGreater };
  std::string key;
  Target target = Target::kValue;
  Result result = Result::kEqual;
  std::string value;        // for kValue
  std::int64_t number = 0;  // for the revisions and the lease
};

// One operation of a transaction branch: a put (with an optional lease), a delete, or a range
// read of one key.
struct EtcdOp {
  enum class Kind { kPut, kDelete, kRange };
  Kind kind = Kind::kRange;
  std::string key;
  std::string value;
  std::int64_t lease = 0;
};

struct EtcdTxnResult {
  bool succeeded = false;
  // What each range operation of the executed branch read, in order: nullopt for a key that
  // does not exist.
  std::vector<std::optional<EtcdKeyValue>> ranges;
  std::int64_t revision = 0;  // the store's revision after the transaction
};

// A client of etcd v3's HTTP/JSON gateway (etcd 3.4: POST /v3/...; keys and values base64,
// int64 as JSON strings). Synchronous, for one thread at a time: each thread that talks to etcd
// this way owns one (the fence store's advances and reads use EtcdAsyncClient instead).
// A failed attempt (refused, timed out, 5xx, etcd "unavailable") moves to the next member.
// Reads and operations flagged idempotent are retried there until operation_timeout; others
// are retried only when the request never reached a member (the connection failed).
class EtcdClient {
 public:
  EtcdClient(EtcdClientOptions options, std::shared_ptr<EtcdClientCounters> counters);
  ~EtcdClient();
  EtcdClient(const EtcdClient&) = delete;
  EtcdClient& operator=(const EtcdClient&) = delete;

  // A linearizable read of one key (needs a quorum): nullopt when absent.
  Status Get(std::string_view key, std::optional<EtcdKeyValue>* out);
  // A linearizable read of every key under `prefix`.
  Status GetPrefix(std::string_view prefix, std::vector<EtcdKeyValue>* out);
  // A linearizable read of at most `limit` keys under `prefix`, in key order, from `from`
  // (inclusive; at least `prefix`). `more`: etcd holds further keys in that range.
  Status GetPrefixPage(std::string_view prefix, std::string_view from, std::size_t limit,
                       std::vector<EtcdKeyValue>* out, bool* more);
  // A linearizable check whether any key starts with `prefix`, reading at most one key.
  Status AnyWithPrefix(std::string_view prefix, bool* found);
  // `idempotent`: the caller's transaction has the same effect when applied twice, so it may be
  // retried on another member after a timeout whose outcome is unknown.
  Status Txn(const std::vector<EtcdCompare>& compares, const std::vector<EtcdOp>& success,
             const std::vector<EtcdOp>& failure, bool idempotent, EtcdTxnResult* out);
  Status Put(std::string_view key, std::string_view value, std::int64_t lease);
  Status Delete(std::string_view key);
  // Grants a lease of `ttl_seconds`; `id` receives its ID.
  Status LeaseGrant(std::int64_t ttl_seconds, std::int64_t* id);
  // Renews the lease once; `ttl_seconds` receives what is left (0 or less: it has expired).
  Status LeaseKeepAlive(std::int64_t id, std::int64_t* ttl_seconds);
  Status LeaseRevoke(std::int64_t id);
  // Revokes a lease its owner no longer wants, when nothing waits on the outcome: if etcd cannot
  // be asked, the lease ends by itself within its TTL and takes its keys with it, so a failure
  // only delays by at most that TTL what the revoke would have freed at once.
  void RevokeOrLetExpire(std::int64_t id);
  // What is left of the lease, in seconds (-1: it has expired or never existed).
  Status LeaseTimeToLive(std::int64_t id, std::int64_t* ttl_seconds);

  // The member the next request goes to ("host:port"), for logs.
  const std::string& current_endpoint() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fencegate::lockstore::etcd
