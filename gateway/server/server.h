#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gateway/admin/admin_server.h"
#include "gateway/auth/admin_guard.h"
#include "gateway/auth/authorizer.h"
#include "gateway/cluster/replica_cluster.h"
#include "gateway/config/config.h"
#include "gateway/http/router.h"
#include "gateway/locks/lock_api.h"
#include "gateway/observability/access_log.h"
#include "gateway/observability/etcd_metrics.h"
#include "gateway/observability/lock_metrics.h"
#include "gateway/observability/metrics.h"
#include "gateway/observability/rocksdb_store_metrics.h"
#include "gateway/server/gateway_context.h"
#include "gateway/server/network_thread.h"
#include "gateway/server/privilege_drop.h"
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
//
// Start() builds every component, then the GatewayContext from them (complete, and const from
// then on), then the threads that share it. Shutdown() takes it all down in one written order
// (see there); the destructor runs it too, so no member relies on its declaration order.
class Server {
 public:
  // `privileges`: the config's user: to become once the listeners are bound (privilege_drop.h).
  explicit Server(Config config, PrivilegeDrop privileges = PrivilegeDrop());
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Opens the store, builds adapters, binds every listener and starts the threads. On failure
  // the status's message names the cause (exit code 3).
  lockstore::Status Start();

  // "HOST:PORT" of the bound listeners ([V6]:PORT for IPv6), after Start().
  std::string traffic_address() const;
  std::string admin_address() const;

  // Blocks until SIGTERM or SIGINT, then drains: stops accepting, closes idle connections, lets
  // requests in flight finish for up to timeouts.shutdown_drain, then Shutdown(). Returns
  // kExitOk, or kExitDrainCut if requests were still in flight at the deadline. SIGHUP reloads
  // the TLS certificates.
  int RunUntilSignal();

  // Stops everything, in this order (each step relies on the ones before it):
  //  1. listeners: readiness off, no new connections;
  //  2. lock waiters: the lock clock stops, long-poll acquires are answered;
  //  3. network threads and the admin listener: their io_contexts stop, the threads are joined
  //     (from here on no session runs);
  //  4. adapters: the blocking work they run for the network threads ends;
  //  5. everything that calls back into sessions: token verifiers, the idempotency store, the
  //     lock service (after the store has made the grants in flight durable), the replica
  //     cluster (its lease is revoked) and the admission controller;
  //  6. sessions: each thread lets go of its sessions, including those that still held
  //     themselves for a request cut at the drain deadline; then the threads, the admin
  //     listener and the context go;
  //  7. the store: flushed (a failure is logged) and closed.
  // Idempotent; also for a Start() that failed half-way.
  void Shutdown();

 private:
  lockstore::Status OpenStore();
  void LogStoreOpened();
  lockstore::Status OpenRocksDbStore();
  lockstore::Status OpenEtcdStore();
  lockstore::Status StartCluster();
  lockstore::Status StartLocks();
  lockstore::Status StartLockTable();
  void StartEtcdLocks();
  lockstore::Status OpenIdempotencyStore();
  lockstore::Status BuildAdapters();
  lockstore::Status StartTokenVerifiers();
  lockstore::Status LoadTls();
  // The context of what the steps above built; nothing changes it afterwards but its atomics.
  std::unique_ptr<const GatewayContext> BuildContext();
  lockstore::Status Listen();
  // Flushes the fence store, logging a failure: at shutdown nobody is left to answer.
  void FlushStore();

  Config config_;
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
  std::vector<std::unique_ptr<adapters::AdapterFactory>> factories_;
  // The adapter factories in the network threads' adapter order: the backends' (named in
  // backend_names_), then one per peer replica from peer_adapter_base_ on.
  std::vector<adapters::AdapterFactory*> adapter_order_;
  std::vector<std::string> backend_names_;
  std::size_t peer_adapter_base_ = 0;
  // limits.relay_buffer_memory, shared by the adapters of every backend and thread.
  std::shared_ptr<adapters::RelayBudget> relay_budget_;
  std::unique_ptr<RelayBudgetMetrics> relay_budget_metrics_;
  std::unique_ptr<LockMetrics> lock_metrics_;
  std::unique_ptr<lockstore::AdmissionLockFencer> lock_fencer_;
  // The lock API's state: a LockTable on the embedded store, or EtcdLockService with etcd.
  std::unique_ptr<lockstore::LockService> lock_service_;
  std::unique_ptr<lockstore::TokenSigner> token_signer_;  // locks.signing (README "Tokens")
  std::unique_ptr<LockApi> lock_api_;
  std::unique_ptr<lockstore::IdempotencyStore> idempotency_;
  // The routes' verify_tokens checks; verifier_of_route_[i] is route i's, or null.
  std::vector<std::unique_ptr<lockstore::TokenVerifier>> token_verifiers_;
  std::vector<lockstore::TokenVerifier*> verifier_of_route_;
  std::unique_ptr<lockstore::AdmissionController> admission_;
  std::unique_ptr<ReplicaCluster> cluster_;
  std::unique_ptr<const GatewayContext> context_;
  std::vector<std::unique_ptr<NetworkThread>> threads_;
  std::unique_ptr<AdminServer> admin_;
  PrivilegeDrop privileges_;
  bool shut_down_ = false;
};

}  // namespace fencegate::gateway
