#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gateway/observability/access_log.h"
#include "gateway/admin/admin_server.h"
#include "gateway/auth/admin_guard.h"
#include "gateway/auth/authorizer.h"
#include "gateway/cluster/replica_cluster.h"
#include "gateway/config/config.h"
#include "gateway/observability/etcd_metrics.h"
#include "gateway/server/gateway_context.h"
#include "gateway/locks/lock_api.h"
#include "gateway/observability/lock_metrics.h"
#include "gateway/observability/metrics.h"
#include "gateway/server/network_thread.h"
#include "gateway/observability/rocksdb_store_metrics.h"
#include "gateway/http/router.h"
#include "gateway/tls/listener_tls.h"
#include "lockstore/fence/admission.h"
#include "lockstore/fence/fence_store.h"
#include "lockstore/idempotency/idempotency_store.h"
#include "lockstore/locks/lock_clock.h"
#include "lockstore/locks/lock_fencer.h"
#include "lockstore/locks/lock_table.h"
#include "resource_adapters/adapter.h"

namespace fencegate::gateway {

// Process exit codes (README "Exit codes").
enum ExitCode : int {
  kExitOk = 0,
  kExitConfigError = 1,
  kExitUsageError = 2,
  kExitStartupFailure = 3,
  kExitDrainCut = 4,
};

// The whole gateway: fence store, admission, adapters, network threads and the admin listener.
class Server {
 public:
  explicit Server(Config config);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Opens the store, builds adapters, binds every listener and starts the threads. On failure
  // returns false with a message naming the cause (exit code 3).
  bool Start(std::string* error);

  // "HOST:PORT" of the bound listeners ([V6]:PORT for IPv6), after Start().
  std::string traffic_address() const;
  std::string admin_address() const;

  // Blocks until SIGTERM or SIGINT, then drains: stops accepting, closes idle connections, lets
  // requests in flight finish for up to timeouts.shutdown_drain, flushes the store. Returns
  // kExitOk, or kExitDrainCut if requests were still in flight at the deadline. SIGHUP reloads
  // the TLS certificates.
  int RunUntilSignal();

 private:
  bool OpenStore(std::string* error);
  bool OpenRocksDbStore(std::string* error);
  bool OpenEtcdStore(std::string* error);
  bool StartCluster(std::string* error);
  bool StartLocks(std::string* error);
  bool StartLockTable(std::string* error);
  void StartEtcdLocks();
  bool OpenIdempotencyStore(std::string* error);
  bool BuildAdapters(std::string* error);
  bool StartTokenVerifiers(std::string* error);
  bool LoadTls(std::string* error);
  bool Listen(std::string* error);
  void StopThreads();

  Config config_;
  // Outlives the store: lock writes still draining when the store closes call back into the
  // lock table, which reads the clock.
  std::unique_ptr<lockstore::SteadyLockClock> lock_clock_;
  std::unique_ptr<lockstore::FenceStore> store_;
  lockstore::etcd::EtcdFenceStore* etcd_store_ = nullptr;   // store_ when store.kind is etcd
  lockstore::etcd::EtcdClientOptions etcd_client_options_;  // its clients', for the etcd locks
  std::unique_ptr<EtcdStoreMetrics> etcd_metrics_;
  std::unique_ptr<RocksDbStoreMetrics> rocksdb_metrics_;
  std::unique_ptr<AccessLog> access_log_;
  std::unique_ptr<GatewayMetrics> metrics_;
  std::unique_ptr<Router> router_;
  std::unique_ptr<tls::ListenerTls> traffic_tls_;
  std::unique_ptr<tls::ListenerTls> admin_tls_;
  std::unique_ptr<auth::Authorizer> authorizer_;
  std::unique_ptr<auth::AdminGuard> admin_guard_;
  GatewayContext context_;
  std::vector<std::unique_ptr<adapters::AdapterFactory>> factories_;
  // limits.relay_buffer_memory, shared by the adapters of every backend and thread.
  std::shared_ptr<adapters::RelayBudget> relay_budget_;
  std::unique_ptr<RelayBudgetMetrics> relay_budget_metrics_;
  std::vector<std::unique_ptr<NetworkThread>> threads_;
  std::unique_ptr<AdminServer> admin_;
  std::unique_ptr<LockMetrics> lock_metrics_;
  std::unique_ptr<lockstore::AdmissionLockFencer> lock_fencer_;
  // The lock API's state: a LockTable on the embedded store, or EtcdLockService with etcd.
  std::unique_ptr<lockstore::LockService> lock_service_;
  std::unique_ptr<lockstore::TokenSigner> token_signer_;  // locks.signing (README "Tokens")
  std::unique_ptr<LockApi> lock_api_;
  // Destroyed before the threads: its drained callbacks post to their (stopped) io_contexts.
  std::unique_ptr<lockstore::IdempotencyStore> idempotency_;
  // The routes' verify_tokens checks. Destroyed before the threads, like idempotency_.
  std::vector<std::unique_ptr<lockstore::TokenVerifier>> token_verifiers_;
  // Destroyed first: callbacks it still holds point into sessions owned by the threads.
  std::unique_ptr<lockstore::AdmissionController> admission_;
  // Refers to admission_ (it makes it forget a shard's keys): destroyed before it.
  std::unique_ptr<ReplicaCluster> cluster_;
};

}  // namespace fencegate::gateway
