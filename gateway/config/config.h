#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/log/event_log.h"
#include "base/tls_client/client_tls_options.h"
#include "gateway/auth/auth_config.h"
#include "gateway/http/underscore_action.h"
#include "gateway/tls/tls_settings.h"
#include "lockstore/fence/fence_key_template.h"
#include "lockstore/locks/lock_rules.h"
#include "lockstore/locks/token_signer.h"
#include "resource_adapters/registry/registry.h"

namespace fencegate::gateway {

// A listen address: host (IPv4/IPv6 literal or "localhost") and port (0 = any free port).
struct ListenAddress {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
};

struct Limits {
  std::size_t max_header_bytes = 16 * 1024;   // larger header block -> 431
  std::uint64_t max_body_bytes = 8ull << 30;  // larger body -> 413
  std::size_t max_connections = 20000;        // accepting pauses above this
  // Relay buffers of all request bodies in progress together; a body beyond -> 503.
  std::uint64_t relay_buffer_memory = 1ull << 30;
  // Request fields whose names contain '_' (README "Header names with underscores").
  UnderscoreAction headers_with_underscores = UnderscoreAction::kDrop;
};

struct Timeouts {
  std::chrono::milliseconds header_read{10000};     // whole request header
  std::chrono::milliseconds body_read{30000};       // idle time between body reads
  std::chrono::milliseconds idle{60000};            // keep-alive with no request
  std::chrono::milliseconds response_write{30000};  // idle time between response writes
  std::chrono::milliseconds shutdown_drain{15000};  // in-flight requests on SIGTERM
  std::chrono::milliseconds barrier_wait{65000};    // advance barrier wait before 503
  // An admitted fenced request still sending its body or reading its response this long after
  // admission is cut (and its fence released); below barrier_wait, so a newer token that waits
  // for it is admitted rather than refused.
  std::chrono::milliseconds write_deadline{60000};
};

struct StoreConfig {
  std::string kind = "rocksdb";
  std::string path;             // default: <data_dir>/fences
  std::string path_as_written;  // before it was made absolute against the config's directory
  std::size_t block_cache_bytes = 32u << 20;
  std::size_t cached_keys = 100000;
  std::size_t rejection_retention = 10000;
  // kind "rocksdb": how many refused writes' audit records may wait to be written; beyond it
  // they are dropped and counted (RocksDbFenceStoreOptions::rejection_queue).
  std::size_t rejection_queue = 4096;
  // kind "rocksdb": the most the writer waits to gather advances into one fsync under
  // concurrency (RocksDbFenceStoreOptions::group_commit_wait).
  std::chrono::microseconds group_commit_wait{1000};
  // kind "etcd" (README "Running several replicas"): the members' client addresses
  // ("host:port"), the key prefix shared by the replicas, and the client's timeouts (one
  // attempt on one member; all attempts of one operation, after which the write gets 503).
  std::vector<std::string> endpoints;
  std::string prefix = "/fencegate/";
  std::chrono::milliseconds request_timeout{1000};
  std::chrono::milliseconds operation_timeout{3000};
  // kind "etcd": the most keys one group-commit transaction carries; at most the members'
  // --max-txn-ops (EtcdFenceStoreOptions::max_txn_ops).
  std::size_t max_txn_ops = 128;
  // store.tls: HTTPS to every member (README "Security"); unset: plain HTTP.
  std::optional<tls_client::ClientTlsOptions> tls;
};

struct AccessLogConfig {
  std::string path = "-";  // "-" stdout, "" off, else a file
  // Lines of failed requests (status >= 400) logged per client, fence key and second on each
  // network thread; the rest are counted (gateway/observability/error_log_cap.h). 0: every line.
  unsigned error_lines_per_second = 10;
};

// The event log (base/log/event_log.h): what the gateway did, as JSON lines.
struct EventLogConfig {
  std::string path = "-";  // "-" standard error, else a file (appended to; reopened on SIGUSR1)
  log::Level level = log::Level::kInfo;
};

// W3C Trace Context (gateway/http/trace_context.h): a valid traceparent is passed on as sent.
struct TraceContextConfig {
  // A request without a valid traceparent gets one generated (a new trace) before it goes
  // upstream; false: such requests go upstream as they came, without a trace id in the logs.
  bool generate = true;
};

// One entry of `backends`: its kind's options (resource_adapters/registry/registry.h), the members
// its kind's row uses.
struct BackendConfig : adapters::BackendOptions {
  std::string name;
  std::string kind;  // a row of adapters::BackendKindRows(): "http", "filesystem", "webdav", "s3"
  // The kind's data-dir path (BackendKindRow::data_dir_path, the filesystem root) as written,
  // before "{data_dir}" was expanded into it; kept so that a --data-dir override can expand it
  // again.
  std::string data_dir_path_as_written;
};

// Per-route Idempotency-Key handling (README "Idempotency keys").
struct IdempotencyConfig {
  enum class Mode { kStore, kForward };
  Mode mode = Mode::kStore;
  bool required = false;  // a listed method without a key -> 400
  std::vector<std::string> methods{"POST", "PATCH"};
  std::string header = "Idempotency-Key";  // the client's field
  std::chrono::milliseconds expire_after{std::chrono::hours(24)};
  std::uint64_t max_response_bytes = 1u << 20;     // larger responses are not kept
  std::string identity_header;                     // client identity in the store key; "" none
  std::string forward_header = "Idempotency-Key";  // mode forward: the backend's field
};

// A route's live check of unsigned tokens against the external lock service that issued them
// (README "Tokens", verify_tokens.etcd): etcd's lock API, token = the lock key's create_revision.
struct TokenVerifyConfig {
  std::vector<std::string> endpoints;  // the lock service's etcd members, "HOST:PORT"
  // The etcd lock name for a request (its keys are "<lock name>/<lease hex>"), from the same
  // placeholders as fence_key.
  lockstore::FenceKeyTemplate lock_name;
  std::chrono::milliseconds timeout{500};           // one whole check; then 503 (fail closed)
  std::optional<tls_client::ClientTlsOptions> tls;  // HTTPS to the members; unset: plain HTTP
};

// Whether a route's refusals tell the client the fence's highest token (README "Refusals"): the
// number tells a zombie or an attacker exactly how far a forged token must jump.
enum class HighestTokenDisclosure : std::uint8_t {
  kAlways,
  kAuthenticated,  // only to a client that proved itself one of the traffic principals
  kNever,
};

struct RouteConfig {
  std::string name;
  std::string prefix;   // path prefix, starts with '/'
  std::string host;     // empty: any host
  std::string backend;  // a key of Config::backends
  lockstore::FenceKeyTemplate fence_key;
  std::vector<std::string> fenced_methods{"PUT", "POST", "PATCH", "DELETE"};
  bool fence_reads = false;
  std::optional<IdempotencyConfig> idempotency;
  // README "Tokens": fenced writes must carry a valid Fencing-Token-Signature from the lock API.
  bool require_signed_tokens = false;
  // A token more than this above the fence's highest is refused unless validly signed; 0: off.
  std::uint64_t max_token_advance = 0;
  // A token beyond max_token_advance is admitted when the lock service confirms it is held now.
  std::optional<TokenVerifyConfig> verify_tokens;
  std::optional<auth::RoutePolicyConfig> policy;  // none: open to every client
  // Not in the file: kAuthenticated when traffic principals are configured, else kAlways.
  HighestTokenDisclosure disclose_highest_token = HighestTokenDisclosure::kAlways;
  // /readyz answers 503 while the route's backend has no usable server (README "Backends with
  // several servers"); with no route required, /readyz does not look at backends.
  bool required = false;
};

// The built-in lock API (README "Built-in locks").
struct LocksConfig {
  bool enabled = true;
  std::string prefix = "/locks/";  // on the traffic listener; checked before the routes
  std::chrono::milliseconds default_ttl{30000};
  std::chrono::milliseconds min_ttl{100};
  std::chrono::milliseconds max_ttl{std::chrono::hours(1)};
  std::chrono::milliseconds max_wait{std::chrono::minutes(5)};
  std::size_t max_waiters = 1000;          // per lock
  std::size_t cached_locks = 100000;       // idle locks kept in memory
  std::vector<lockstore::LockRule> rules;  // first match wins
  lockstore::TokenKeyring signing;         // empty: tokens are not signed
  // Who may use the lock API (README "Built-in locks"); none: every client, every lock.
  std::optional<auth::LockPolicyConfig> policy;
};

// Several replicas on store kind etcd (README "Running several replicas", docs/ARCHITECTURE.md
// "Several replicas").
struct ClusterConfig {
  bool enabled = false;  // a `cluster:` section is present
  std::string name;      // this replica; a key of `peers`
  std::size_t shards = 16;
  std::chrono::milliseconds lease_ttl{3000};  // whole seconds (etcd lease TTLs are)
  // Before a new owner admits writes to a shard: lease_ttl + the longest upstream
  // response_timeout (LongestUpstreamResponse), or longer when set so.
  std::chrono::milliseconds quarantine{0};
  std::map<std::string, std::string> peers;  // every replica's name -> traffic HOST:PORT
  // The forwarding hop to the peers' traffic listeners: set exactly when tls.traffic is (the
  // loader requires cluster.tls then and refuses it otherwise); HTTPS with these keys.
  std::optional<tls_client::ClientTlsOptions> tls;
};

// The servers and balancing of a networked backend (http and webdav: the passthrough's, s3);
// null for a filesystem backend or an unknown kind.
const adapters::BalancingOptions* BackendBalancing(const BackendConfig& backend);

struct Config;
// The longest a request sent upstream can stay unanswered before the gateway gives up on it:
// the http, webdav and s3 backends' response_timeout (a filesystem write is in-process and
// re-checks the token kept with the file).
std::chrono::milliseconds LongestUpstreamResponse(const Config& config);

struct Config {
  std::string source_path;  // the file it was loaded from
  // source_path's directory, absolute: relative paths in the file are resolved against it.
  std::string config_dir;
  ListenAddress listen{"127.0.0.1", 8080};
  ListenAddress admin_listen{"127.0.0.1", 9901};
  std::string data_dir = "./var";  // absolute once loaded
  // data_dir as the file (or the default) wrote it; "" after --data-dir overrode it.
  std::string data_dir_as_written = "./var";
  // Started as root: the account the process becomes once its listeners are bound (docs/
  // OPERATIONS.md "Running as another user"); empty: it stays who started it. `group` defaults
  // to the user's primary group.
  std::string user;
  std::string group;
  unsigned threads = 0;  // 0 = one per core
  Limits limits;
  Timeouts timeouts;
  StoreConfig store;
  AccessLogConfig access_log;
  EventLogConfig log;
  TraceContextConfig trace_context;
  std::map<std::string, BackendConfig> backends;
  std::vector<RouteConfig> routes;
  LocksConfig locks;
  tls::TlsConfig tls;            // README "Transport (TLS)"
  auth::CredentialsConfig auth;  // traffic principals (README "Authentication")
  auth::AdminAuthConfig admin;   // the admin listener's own principals
  ClusterConfig cluster;         // several replicas (store kind etcd)
  // Not from the file: the routes whose changed fence-key binding the operator accepted for this
  // start or reload (--accept-fence-key-change, gateway/server/route_bindings.h).
  std::vector<std::string> accepted_fence_key_changes;
};

}  // namespace fencegate::gateway
