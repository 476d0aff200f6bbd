#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gateway/admin/admin_server.h"
#include "gateway/auth/admin_guard.h"
#include "gateway/auth/authorizer.h"
#include "gateway/cluster/replica_cluster.h"
#include "gateway/config/command_line.h"
#include "gateway/config/config.h"
#include "gateway/config/config_diff.h"
#include "gateway/events/event_hub.h"
#include "gateway/http/router.h"
#include "gateway/locks/lock_api.h"
#include "gateway/observability/access_log.h"
#include "gateway/observability/etcd_metrics.h"
#include "gateway/observability/lock_metrics.h"
#include "gateway/observability/metrics.h"
#include "gateway/observability/process_metrics.h"
#include "gateway/observability/reload_metrics.h"
#include "gateway/observability/rocksdb_store_metrics.h"
#include "gateway/server/config_generation.h"
#include "gateway/server/gateway_context.h"
#include "gateway/server/generation_slot.h"
#include "gateway/server/network_thread.h"
#include "gateway/server/privilege_drop.h"
#include "gateway/server/reload_report.h"
#include "gateway/server/reload_worker.h"
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
// then on) and the first ConfigGeneration, then the threads that share them. A reload builds a
// new generation and hands it to each thread (README "Reloading"). Shutdown() takes it all down
// in one written order (see there); the destructor runs it too, so no member relies on its
// declaration order.
class Server {
 public:
  // `command_line`: its overrides are applied again to each reloaded configuration.
  // `privileges`: the config's user: to become once the listeners are bound (privilege_drop.h).
  explicit Server(Config config, CommandLine command_line = {},
                  PrivilegeDrop privileges = PrivilegeDrop());
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
  // the configuration (RequestReload).
  int RunUntilSignal();

  // Thread-safe, after Start(): re-reads Config::source_path on the reload thread and, when it
  // loads, applies it for new connections and reloads the listeners' TLS certificates; then
  // logs the result and calls `done` with it (on the reload thread). Reloads run one at a time.
  void RequestReload(ReloadRequest request, std::function<void(const ReloadReport&)> done);

  // Stops everything, in this order (each step relies on the ones before it):
  //  0. reloads: the one in progress finishes, queued ones are dropped;
  //  1. listeners: readiness off, no new connections;
  //  2. lock waiters: the lock clock stops, long-poll acquires are answered;
  //  3. network threads and the admin listener: their io_contexts stop, the threads are joined
  //     (from here on no session runs);
  //  4. adapters: the blocking work they run for the network threads ends;
  //  5. everything that calls back into sessions: token verifiers, the idempotency store, the
  //     lock service (after the store has made the grants in flight durable), the replica
  //     cluster (its lease is revoked) and the admission controller;
  //  6. sessions: each thread lets go of its sessions, including those that still held
  //     themselves for a request cut at the drain deadline; then the threads, the reload
  //     thread's dropped jobs, the admin listener and the context go;
  //  7. the store: flushed (a failure is logged) and closed.
  // Idempotent; also for a Start() that failed half-way.
  void Shutdown();

 private:
  // Durable advances kept for GET /admin/fences/{key}'s history (about 100 bytes each).
  static constexpr std::size_t kAdvanceHistoryLength = 4096;

  lockstore::Status PrepareAsUser();
  lockstore::Status OpenStore();
  void LogStoreOpened();
  lockstore::Status OpenRocksDbStore();
  lockstore::Status OpenEtcdStore();
  lockstore::Status StartCluster();
  lockstore::Status StartLocks();
  lockstore::Status StartLockTable();
  void StartEtcdLocks();
  // Opens the idempotency store (under data_dir) the first time a generation has a route that
  // keeps idempotency records, at start or at a reload.
  lockstore::Status OpenIdempotencyStore();
  lockstore::Status BuildPeerAdapters();
  lockstore::Status LoadTls();
  // The generation of `config` (server_generation.cc). `previous` (null at start) and `diff`:
  // its backends' factories and routes' token verifiers are kept where their entries did not
  // change.
  lockstore::Status BuildGeneration(Config config, std::string file_text,
                                    const ConfigGeneration* previous, const ConfigDiff* diff,
                                    std::shared_ptr<const ConfigGeneration>* out);
  lockstore::Status BuildBackendFactories(const ConfigGeneration* previous, const ConfigDiff* diff,
                                          ConfigGeneration& generation);
  lockstore::Status ResolveTokenVerifiers(const ConfigDiff* diff, ConfigGeneration& generation);
  // server_reload.cc: one reload, on the reload thread.
  ReloadReport Reload(const ReloadRequest& request);
  // Makes `generation` current on every network thread, and waits until each has.
  void PublishGeneration(std::shared_ptr<const ConfigGeneration> generation);
  // The context of what the steps above built; nothing changes it afterwards but its atomics.
  std::unique_ptr<const GatewayContext> BuildContext();
  lockstore::Status Listen();
  // Flushes the fence store, logging a failure: at shutdown nobody is left to answer.
  void FlushStore();

  // The configuration at start: what a reload cannot change (listeners, store, locks, cluster)
  // is read from here. The one in force for routes and backends is generation_'s.
  Config config_;
  std::string started_file_text_;  // config_'s file, for what a reload cannot change
  CommandLine command_line_;
  std::unique_ptr<lockstore::SteadyLockClock> lock_clock_;
  std::unique_ptr<lockstore::FenceStore> store_;
  lockstore::etcd::EtcdFenceStore* etcd_store_ = nullptr;   // store_ when store.kind is etcd
  lockstore::etcd::EtcdClientOptions etcd_client_options_;  // its clients', for the etcd locks
  std::unique_ptr<EtcdStoreMetrics> etcd_metrics_;
  std::unique_ptr<RocksDbStoreMetrics> rocksdb_metrics_;
  std::unique_ptr<AccessLog> access_log_;
  std::unique_ptr<GatewayMetrics> metrics_;
  std::unique_ptr<ProcessMetrics> process_metrics_;
  // Before the lock API and the threads that publish to it, so it outlives them.
  EventHub events_{kEventRingCapacity};
  std::unique_ptr<ReloadMetrics> reload_metrics_;
  std::unique_ptr<tls::ListenerTls> traffic_tls_;
  std::unique_ptr<tls::ListenerTls> admin_tls_;
  // Every adapter factory made since start: generations point into it, and a thread's adapters
  // may still use an older generation's until its last session ends.
  std::vector<std::unique_ptr<adapters::AdapterFactory>> factories_;
  std::vector<adapters::AdapterFactory*> peer_factories_;  // one per peer replica
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
  // The routes' verify_tokens checks, every one made since start (an older generation's
  // sessions may still ask theirs); the current one of each route by name.
  std::vector<std::unique_ptr<lockstore::TokenVerifier>> token_verifiers_;
  std::map<std::string, lockstore::TokenVerifier*> verifier_of_route_;
  // For the admin API's summary and fence history (GatewayContext); before admission_, which
  // records into advance_history_ until it is gone.
  lockstore::AdvanceHistory advance_history_{kAdvanceHistoryLength};
  RefusalTops refusal_tops_;
  TrafficSeries traffic_series_;
  std::unique_ptr<lockstore::AdmissionController> admission_;
  std::unique_ptr<ReplicaCluster> cluster_;
  std::unique_ptr<const GatewayContext> context_;
  // The generation in force. Written at start and then only by the reload thread.
  std::shared_ptr<const ConfigGeneration> generation_;
  GenerationSlot generation_slot_;  // the same, for the admin listener
  std::unique_ptr<ReloadWorker> reload_worker_;
  std::vector<std::unique_ptr<NetworkThread>> threads_;
  std::unique_ptr<AdminServer> admin_;
  PrivilegeDrop privileges_;
  bool shut_down_ = false;
};

}  // namespace fencegate::gateway
