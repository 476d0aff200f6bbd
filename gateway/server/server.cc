#include "gateway/server/server.h"

#include <pthread.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <system_error>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/log/event_log.h"
#include "base/tls_client/client_tls.h"
#include "gateway/cli/store_command.h"
#include "gateway/cli/store_location.h"
#include "gateway/http/request_fields.h"
#include "gateway/http/time_format.h"
#include "gateway/observability/build_info.h"
#include "gateway/observability/store_log_sink.h"
#include "gateway/server/config_text.h"
#include "gateway/server/listen_socket.h"
#include "gateway/server/route_bindings.h"
#include "gateway/server/service_notify.h"
#include "lockstore/etcd/etcd_fence_store.h"
#include "lockstore/etcd/etcd_lock_service.h"
#include "lockstore/rocksdb/rocksdb_fence_store.h"
#include "resource_adapters/http/http_adapter.h"

namespace fencegate::gateway {
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// How often the drain checks whether everything in flight has finished.
constexpr auto kDrainPoll = std::chrono::milliseconds(10);

lockstore::Status ResolveListenAddress(const ListenAddress& address, tcp::endpoint* out) {
  const std::string host = address.host == "localhost" ? "127.0.0.1" : address.host;
  boost::system::error_code ec;
  const auto ip = net::ip::make_address(host, ec);
  if (ec) {
    return lockstore::Status::InvalidArgument("invalid listen host '" + address.host +
                                              "': " + ec.message());
  }
  *out = tcp::endpoint(ip, address.port);
  return lockstore::Status::Ok();
}

std::string FormatEndpoint(const tcp::endpoint& endpoint) {
  const std::string host = endpoint.address().to_string();
  const std::string port = std::to_string(endpoint.port());
  return endpoint.address().is_v6() ? "[" + host + "]:" + port : host + ":" + port;
}

// The signals RunUntilSignal handles, held (blocked, so pending) from start-up until it takes
// them: one sent right after the readiness notification (systemctl reload or stop, logrotate)
// would otherwise meet its default action and end the process without a drain.
void HeldSignalMask(int how) {
  sigset_t held;
  sigemptyset(&held);
  for (const int signal : {SIGUSR1, SIGHUP, SIGTERM, SIGINT}) sigaddset(&held, signal);
  pthread_sigmask(how, &held, nullptr);
}

}  // namespace

Server::Server(Config config, CommandLine command_line, PrivilegeDrop privileges)
    : config_(std::move(config)),
      command_line_(std::move(command_line)),
      privileges_(std::move(privileges)) {}

Server::~Server() { Shutdown(); }

void Server::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  // 0. Reloads: none hands a generation to the threads from here on (a POST /admin/reload
  // still waiting is dropped, its connection closed unanswered in step 6).
  if (reload_worker_) reload_worker_->Stop();
  // 1. Listeners.
  if (context_) {
    context_->accepting = false;
    context_->draining = true;
  }
  // 2. Lock waiters: no expiry or wait deadline fires from here on; long polls are answered.
  if (lock_clock_) lock_clock_->Stop();
  if (lock_service_) lock_service_->CancelAllWaiters();
  // 3. Network threads and the admin listener: no session runs after this.
  for (auto& thread : threads_) thread->Stop();
  if (admin_) admin_->Stop();
  for (auto& thread : threads_) thread->Join();
  if (admin_) admin_->Join();
  // 4. Adapters: blocking work they run for the network threads (filesystem I/O) ends.
  for (auto& factory : factories_) factory->WaitForWorkBoundForNetworkThreads();
  // 5. What calls back into sessions. Callbacks still pending post to the stopped threads'
  // inboxes and are destroyed with them, never run. The verifiers answer what is queued and
  // join their threads; the idempotency store drains; lock grants in flight finish (they may
  // still raise fences through admission_) once the store has made them durable.
  token_verifiers_.clear();
  idempotency_.reset();
  lock_api_.reset();
  if (lock_service_) {
    FlushStore();
    lock_service_.reset();
  }
  lock_fencer_.reset();
  cluster_.reset();  // revokes the lease: the shards move without waiting for the TTL
  admission_.reset();
  // 6. Sessions: each thread's adapters, then the sessions still holding themselves (a request
  // cut at the drain deadline), then the io_contexts with what they still held.
  for (auto& thread : threads_) thread->ReleaseSessions();
  threads_.clear();
  reload_worker_.reset();  // the admin connections its dropped reloads held, before their thread's
  admin_.reset();
  context_.reset();
  generation_slot_.Set(nullptr);
  generation_.reset();
  // 7. The store.
  if (store_) {
    FlushStore();
    store_.reset();
  }
}

void Server::FlushStore() {
  const lockstore::Status flushed = store_->Flush();
  if (!flushed.ok()) {
    log::Error("flushing the fence store failed", {{"error", flushed.ToString()}});
  }
}

lockstore::Status Server::Start() {
  // Signals an operator's tools send that must never end the process (README "Signals"): a
  // closed pipe (SIGPIPE) and haproxy-style reloads (SIGUSR2) are ignored. Logrotate's SIGUSR1,
  // a reload's SIGHUP and a stop's SIGTERM/SIGINT stay pending (blocked here, in every thread
  // started from here on) until RunUntilSignal takes them up, so one sent right after start-up
  // still reopens the access log, reloads, or drains.
  for (const int ignored : {SIGPIPE, SIGUSR2}) std::signal(ignored, SIG_IGN);
  HeldSignalMask(SIG_BLOCK);
  // Everything from here on is opened with the rights the process keeps (privilege_drop.h).
  if (lockstore::Status acting = privileges_.ActAsUser(); !acting.ok()) return acting;
  if (lockstore::Status prepared = PrepareAsUser(); !prepared.ok()) {
    // A failed start exits as it began, with root's effective ids: a process left half-dropped
    // (effective uid changed, so not dumpable, and not root) cannot be inspected at exit, and
    // the sanitizer builds' leak check, which stops its threads with ptrace, dies there.
    (void)privileges_.RegainRootToBind();
    return prepared;
  }
  if (lockstore::Status root = privileges_.RegainRootToBind(); !root.ok()) return root;
  if (lockstore::Status listening = Listen(); !listening.ok()) return listening;
  // No network thread serves before the process has dropped root for good.
  if (lockstore::Status dropped = privileges_.DropForGood(); !dropped.ok()) return dropped;
  // Started after the drop: it inherits the process's rights and the blocked signals.
  reload_worker_ = std::make_unique<ReloadWorker>();
  for (auto& thread : threads_) thread->Start();
  admin_->Start();
  context_->accepting = true;
  log::Info("listening", {{"traffic", traffic_address()},
                          {"traffic_tls", config_.tls.traffic.enabled},
                          {"admin", admin_address()},
                          {"admin_tls", config_.tls.admin.enabled},
                          {"threads", threads_.size()}});
  return lockstore::Status::Ok();
}

// Opens the store, the logs and the backends and builds the threads, acting as the configured
// user; nothing serves yet.
lockstore::Status Server::PrepareAsUser() {
  if (std::string error; !log::ProcessLog().Open(config_.log.path, &error)) {
    return lockstore::Status::IOError(error);
  }
  log::ProcessLog().set_level(config_.log.level);
  log::Info("fencegate starting", {{"version", FENCEGATE_VERSION},
                                   {"config", config_.source_path},
                                   {"pid", static_cast<std::int64_t>(::getpid())}});
  if (lockstore::Status opened = OpenStore(); !opened.ok()) return opened;
  LogStoreOpened();
  if (lockstore::Status bound =
          CheckAndRecordRouteBindings(config_, *store_, config_.accepted_fence_key_changes);
      !bound.ok()) {
    return bound;
  }
  const lockstore::Status log_status = AccessLog::Open(config_.access_log.path, &access_log_);
  if (!log_status.ok()) {
    // The message alone named the cause before start-up spoke Status; keep it that way.
    return lockstore::Status::IOError(log_status.ToString());
  }
  std::vector<std::string> route_names;
  for (const RouteConfig& route : config_.routes) route_names.push_back(route.name);
  const unsigned thread_count =
      config_.threads != 0 ? config_.threads : std::max(1u, std::thread::hardware_concurrency());
  metrics_ = std::make_unique<GatewayMetrics>(route_names, thread_count);
  RegisterBuildInfo(metrics_->registry(), FENCEGATE_VERSION);
  process_metrics_ = std::make_unique<ProcessMetrics>(metrics_->registry());
  for (const std::string& warning : auth::OpenAccessWarnings(config_)) {
    log::Warn("warning: " + warning);
  }

  lockstore::AdmissionOptions admission_options;
  admission_options.max_cached_keys = config_.store.cached_keys;
  admission_options.now_ms = [] { return NowUnixMs(); };
  admission_options.advance_history = &advance_history_;
  admission_ = std::make_unique<lockstore::AdmissionController>(*store_, admission_options);
  metrics_->store_ready().Set(store_->Ready() ? 1 : 0);
  if (etcd_store_ != nullptr) {
    etcd_metrics_ = std::make_unique<EtcdStoreMetrics>(metrics_->registry(), *etcd_store_);
  } else if (const auto* rocksdb =
                 dynamic_cast<const lockstore::RocksDbFenceStore*>(store_.get())) {
    rocksdb_metrics_ = std::make_unique<RocksDbStoreMetrics>(metrics_->registry(), *rocksdb);
  }
  for (lockstore::Status (Server::*step)() :
       {&Server::StartCluster, &Server::StartLocks, &Server::LoadTls, &Server::BuildPeerAdapters}) {
    if (lockstore::Status status = (this->*step)(); !status.ok()) return status;
  }
  // The file as loaded, for the hash and the next reload's diff; unreadable now (it was read a
  // moment ago), the first reload reports every entry as new.
  std::string file_text;
  if (!ReadConfigText(config_.source_path, &file_text)) file_text.clear();
  started_file_text_ = file_text;
  if (lockstore::Status built =
          BuildGeneration(config_, std::move(file_text), nullptr, nullptr, &generation_);
      !built.ok()) {
    return built;
  }
  generation_slot_.Set(generation_);
  reload_metrics_ =
      std::make_unique<ReloadMetrics>(metrics_->registry(), generation_->config_hash, NowUnixMs());

  // Everything the threads share exists: the context is complete before any thread starts.
  context_ = BuildContext();
  for (std::size_t i = 0; i < metrics_->thread_count(); ++i) {
    threads_.push_back(std::make_unique<NetworkThread>(*context_, generation_, peer_factories_, i));
  }
  admin_ = std::make_unique<AdminServer>(*context_, *admin_tls_);
  admin_->SetReloader([this](ReloadRequest request, std::function<void(const ReloadReport&)> done) {
    RequestReload(std::move(request), std::move(done));
  });
  return lockstore::Status::Ok();
}

void Server::LogStoreOpened() {
  if (etcd_store_ != nullptr) {
    std::string endpoints;
    for (const std::string& endpoint : config_.store.endpoints) {
      endpoints.append(endpoints.empty() ? "" : ",").append(endpoint);
    }
    log::Info(
        "store opened",
        {{"kind", config_.store.kind}, {"endpoints", endpoints}, {"prefix", config_.store.prefix}});
    return;
  }
  log::Info("store opened", {{"kind", config_.store.kind}, {"path", FenceStorePath(config_)}});
}

std::unique_ptr<const GatewayContext> Server::BuildContext() {
  auto context = std::make_unique<GatewayContext>();
  context->store = store_.get();
  context->admission = admission_.get();
  context->metrics = metrics_.get();
  context->access_log = access_log_.get();
  context->locks = lock_api_.get();
  context->lock_table = lock_service_.get();
  context->events = &events_;
  context->token_signer = token_signer_.get();
  context->traffic_tls = traffic_tls_.get();
  // Store-specific metrics (the etcd store's counters, RocksDB's properties) and the
  // cluster's, brought up to date before /metrics renders.
  context->refresh_store_metrics = [etcd = etcd_metrics_.get(), rocksdb = rocksdb_metrics_.get(),
                                    cluster = cluster_.get()] {
    if (etcd != nullptr) etcd->Refresh();
    if (rocksdb != nullptr) rocksdb->Refresh();
    if (cluster != nullptr) cluster->RefreshMetrics();
  };
  context->relay_budget_metrics = relay_budget_metrics_.get();
  context->process_metrics = process_metrics_.get();
  context->cluster = cluster_.get();
  context->generations = &generation_slot_;
  context->refusal_tops = &refusal_tops_;
  context->traffic_series = &traffic_series_;
  context->rocksdb_metrics = rocksdb_metrics_.get();
  context->advance_history = &advance_history_;
  context->started_at_ms = NowUnixMs();
  return context;
}

lockstore::Status Server::OpenStore() {
  if (config_.store.kind == "rocksdb") {
    // Before the data dir is created: whether it was brand new decides whether the store may be.
    if (lockstore::Status opened = OpenRocksDbStore(); !opened.ok()) return opened;
  } else if (config_.store.kind != "etcd") {
    return lockstore::Status::InvalidArgument("unsupported store kind '" + config_.store.kind +
                                              "'");
  }
  std::error_code fs_error;
  std::filesystem::create_directories(config_.data_dir, fs_error);
  if (fs_error) {
    return lockstore::Status::IOError("cannot create data_dir " + config_.data_dir + ": " +
                                      fs_error.message());
  }
  return config_.store.kind == "etcd" ? OpenEtcdStore() : lockstore::Status::Ok();
}

lockstore::Status Server::OpenRocksDbStore() {
  if (lockstore::Status kept = CheckStoreNotLeftBehind(config_); !kept.ok()) return kept;
  lockstore::RocksDbFenceStoreOptions options;
  options.path = FenceStorePath(config_);
  // Made by the first start in a brand-new, empty data dir, or by `fencegate store init`; never
  // silently in place of one that was lost (store_identity.h).
  options.creation = lockstore::StoreCreation::kIfParentEmpty;
  options.block_cache_bytes = config_.store.block_cache_bytes;
  options.rejection_retention = config_.store.rejection_retention;
  options.rejection_queue = config_.store.rejection_queue;
  options.group_commit_wait = config_.store.group_commit_wait;
  // Store failures and recoveries are operator news: they go to the gateway's event log.
  options.log = StoreEventLogSink();
  const lockstore::Status status = lockstore::OpenRocksDbFenceStore(options, &store_);
  if (!status.ok()) {
    return lockstore::Status::IOError("cannot open the fence store at " + options.path + ": " +
                                      status.ToString());
  }
  return lockstore::Status::Ok();
}

lockstore::Status Server::OpenEtcdStore() {
  lockstore::etcd::EtcdClientOptions& client = etcd_client_options_;
  client.endpoints = config_.store.endpoints;
  client.request_timeout = config_.store.request_timeout;
  client.operation_timeout = config_.store.operation_timeout;
  client.tls = config_.store.tls;
  if (client.tls) {
    // One context for the fence store and the etcd locks alike.
    std::string error;
    client.tls_context = tls_client::BuildClientContext(*client.tls, &error);
    if (!client.tls_context) return lockstore::Status::InvalidArgument("store.tls: " + error);
    if (!client.tls->verify_hostname) {
      log::Warn(
          "WARNING: store: tls.verify_hostname is off: any certificate from the configured CA "
          "is accepted for every etcd member");
    }
  }
  lockstore::etcd::EtcdFenceStoreOptions options;
  options.client = client;
  options.prefix = config_.store.prefix;
  options.rejection_retention = config_.store.rejection_retention;
  options.max_txn_ops = config_.store.max_txn_ops;
  options.log = StoreEventLogSink();
  std::unique_ptr<lockstore::etcd::EtcdFenceStore> store;
  const lockstore::Status status = lockstore::etcd::EtcdFenceStore::Open(options, &store);
  if (!status.ok()) {
    return lockstore::Status::Unavailable("cannot open the etcd fence store: " + status.ToString());
  }
  etcd_store_ = store.get();
  store_ = std::move(store);
  return lockstore::Status::Ok();
}

// Several replicas: shard ownership in etcd and the metrics that come with it.
lockstore::Status Server::StartCluster() {
  if (!config_.cluster.enabled) return lockstore::Status::Ok();
  return ReplicaCluster::Start(config_, *admission_, metrics_->registry(), &cluster_);
}

// Only when a route keeps idempotency records (mode store); its own database under data_dir.
lockstore::Status Server::OpenIdempotencyStore() {
  if (idempotency_) return lockstore::Status::Ok();
  lockstore::IdempotencyStoreOptions options;
  options.path = config_.data_dir + "/idempotency";
  options.log = StoreEventLogSink();
  options.now_ms = [] { return NowUnixMs(); };
  const lockstore::Status status = lockstore::IdempotencyStore::Open(options, &idempotency_);
  if (!status.ok()) {
    return lockstore::Status::IOError("cannot open the idempotency store at " + options.path +
                                      ": " + status.ToString());
  }
  return lockstore::Status::Ok();
}

lockstore::Status Server::StartLocks() {
  if (!config_.locks.enabled) return lockstore::Status::Ok();
  lock_metrics_ = std::make_unique<LockMetrics>(metrics_->registry());
  lock_fencer_ = std::make_unique<lockstore::AdmissionLockFencer>(*admission_);
  if (etcd_store_ != nullptr) {
    StartEtcdLocks();
  } else if (lockstore::Status started = StartLockTable(); !started.ok()) {
    return started;
  }
  if (!config_.locks.signing.empty()) {
    token_signer_ = std::make_unique<lockstore::TokenSigner>(
        config_.locks.signing, lockstore::LockRules(config_.locks.rules));
  }
  lock_api_ =
      std::make_unique<LockApi>(*lock_service_, config_.locks, token_signer_.get(), &events_);
  return lockstore::Status::Ok();
}

// With etcd the locks live there too, shared by every replica on the prefix (README "Running
// several replicas"); the fences they raise go through this replica's admission controller.
void Server::StartEtcdLocks() {
  lockstore::etcd::EtcdLockServiceOptions options;
  options.client = etcd_client_options_;  // set by OpenEtcdStore, TLS included
  options.prefix = config_.store.prefix;
  options.min_ttl = config_.locks.min_ttl;
  options.max_ttl = config_.locks.max_ttl;
  options.max_wait = config_.locks.max_wait;
  options.max_waiters_per_lock = config_.locks.max_waiters;
  options.rules = lockstore::LockRules(config_.locks.rules);
  options.now_unix_ms = [] { return NowUnixMs(); };
  lock_service_ = std::make_unique<lockstore::etcd::EtcdLockService>(
      std::move(options), lock_fencer_.get(), lock_metrics_.get());
}

lockstore::Status Server::StartLockTable() {
  auto* persistence = dynamic_cast<lockstore::LockPersistence*>(store_.get());
  if (persistence == nullptr) {
    return lockstore::Status::InvalidArgument("the fence store cannot keep lock state");
  }
  lock_clock_ = std::make_unique<lockstore::SteadyLockClock>();
  lockstore::LockTableOptions options;
  options.min_ttl = config_.locks.min_ttl;
  options.max_ttl = config_.locks.max_ttl;
  options.max_wait = config_.locks.max_wait;
  options.max_waiters_per_lock = config_.locks.max_waiters;
  options.max_cached_locks = config_.locks.cached_locks;
  options.rules = lockstore::LockRules(config_.locks.rules);
  options.now_unix_ms = [] { return NowUnixMs(); };
  auto table = std::make_unique<lockstore::LockTable>(
      *persistence, *lock_clock_, lock_fencer_.get(), lock_metrics_.get(), std::move(options));
  const lockstore::Status loaded = table->Load();
  if (!loaded.ok()) {
    return lockstore::Status::IOError("cannot load the lock table: " + loaded.ToString());
  }
  lock_service_ = std::move(table);
  return lockstore::Status::Ok();
}

lockstore::Status Server::LoadTls() {
  traffic_tls_ =
      std::make_unique<tls::ListenerTls>("traffic", config_.tls.traffic, metrics_->registry());
  admin_tls_ = std::make_unique<tls::ListenerTls>("admin", config_.tls.admin, metrics_->registry());
  if (lockstore::Status loaded = traffic_tls_->Load(); !loaded.ok()) return loaded;
  return admin_tls_->Load();
}

lockstore::Status Server::BuildPeerAdapters() {
  relay_budget_ = std::make_shared<adapters::RelayBudget>(config_.limits.relay_buffer_memory);
  relay_budget_metrics_ =
      std::make_unique<RelayBudgetMetrics>(metrics_->registry(), *relay_budget_);
  // Several replicas: one http adapter per peer, after the backends' adapters. The peer gets
  // the token in Fencing-Token, as the client sent it, and admits or refuses it itself. Its
  // connections are pooled keep-alive ones, HTTPS when the traffic listener speaks TLS (the
  // loader sets cluster.tls exactly then): a handshake per pooled connection, not per write.
  if (cluster_) {
    // The owner answers within its barrier wait plus its own upstream timeout, or with 503/504.
    const auto owner_answers_within =
        config_.timeouts.barrier_wait + LongestUpstreamResponse(config_) + std::chrono::seconds(5);
    if (config_.cluster.tls && !config_.cluster.tls->verify_hostname) {
      log::Warn(
          "WARNING: cluster.tls.verify_hostname is off: any certificate from the configured CA "
          "is accepted as any peer replica");
    }
    for (const ReplicaCluster::Peer& peer : cluster_->peers()) {
      adapters::HttpAdapterOptions options;
      options.host = peer.address.host == "localhost" ? "127.0.0.1" : peer.address.host;
      options.port = peer.address.port;
      options.forward_token_header = std::string(kFencingTokenField);
      options.response_timeout = owner_answers_within;
      if (config_.cluster.tls) {
        options.tls = true;
        options.tls_options = *config_.cluster.tls;
        // The name the peer's certificate must carry: server_name, else the host as written in
        // cluster.peers (not the 127.0.0.1 that "localhost" is dialled as).
        if (options.tls_options.server_name.empty()) {
          options.tls_options.server_name = peer.address.host;
        }
      }
      std::string error;
      std::unique_ptr<adapters::AdapterFactory> factory =
          adapters::MakeHttpAdapterFactory(options, &error);
      if (!factory) {
        return lockstore::Status::InvalidArgument(
            (config_.cluster.tls ? "cluster.tls: " : "cluster.peers." + peer.name + ": ") + error);
      }
      factories_.push_back(std::move(factory));
      peer_factories_.push_back(factories_.back().get());
    }
  }
  return lockstore::Status::Ok();
}

lockstore::Status Server::Listen() {
  tcp::endpoint traffic;
  tcp::endpoint admin;
  if (lockstore::Status resolved = ResolveListenAddress(config_.listen, &traffic); !resolved.ok()) {
    return resolved;
  }
  if (lockstore::Status resolved = ResolveListenAddress(config_.admin_listen, &admin);
      !resolved.ok()) {
    return resolved;
  }
  // One listening socket for the process, one descriptor of it per network thread. The
  // original is closed on return; the threads' duplicates keep the socket open.
  net::io_context setup;
  tcp::acceptor listener(setup);
  if (lockstore::Status opened = OpenListenSocket(listener, traffic, "traffic"); !opened.ok()) {
    return opened;
  }
  for (auto& thread : threads_) {
    if (lockstore::Status shared = thread->ShareListener(listener); !shared.ok()) return shared;
  }
  return admin_->Listen(admin);
}

std::string Server::traffic_address() const {
  return FormatEndpoint(threads_.front()->local_endpoint());
}

std::string Server::admin_address() const { return FormatEndpoint(admin_->local_endpoint()); }

int Server::RunUntilSignal() {
  net::io_context ioc{1};
  net::signal_set signals(ioc, SIGTERM, SIGINT);
  net::signal_set reload_signal(ioc, SIGHUP);
  net::signal_set reopen_signal(ioc, SIGUSR1);
  HeldSignalMask(SIG_UNBLOCK);  // on this thread only: asio's handler takes it from here
  net::steady_timer poll(ioc);
  int exit_code = kExitOk;
  std::chrono::steady_clock::time_point deadline;

  std::function<void()> check_drained = [&] {
    const bool idle =
        context_->requests_in_flight.load() == 0 && context_->open_connections.load() == 0;
    if (idle) {
      log::Info("drained", {{"cut", 0}});
      return;  // nothing left: ioc runs out of work and returns
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      const std::int64_t cut = context_->requests_in_flight.load();
      if (cut > 0) exit_code = kExitDrainCut;
      log::Warn("drain deadline reached",
                {{"cut", cut}, {"connections", context_->open_connections.load()}});
      return;
    }
    poll.expires_after(kDrainPoll);
    poll.async_wait([&](boost::system::error_code ec) {
      if (!ec) check_drained();
    });
  };

  std::function<void()> await_reload = [&] {
    reload_signal.async_wait([&](boost::system::error_code ec, int) {
      if (ec) return;
      RequestReload({.trigger = "SIGHUP", .accepted_fence_key_changes = {}}, nullptr);
      await_reload();
    });
  };
  await_reload();

  // Opening the file blocks: it happens on the reload thread, never on a network thread, and
  // never at the same time as a reload moving the access log to another file.
  std::function<void()> await_reopen = [&] {
    reopen_signal.async_wait([&](boost::system::error_code ec, int) {
      if (ec) return;
      reload_worker_->Post([this] {
        if (const lockstore::Status reopened = access_log_->Reopen(); !reopened.ok()) {
          log::Error("access log not reopened, writing on to the old file",
                     {{"path", access_log_->path()}, {"error", reopened.ToString()}});
        } else {
          log::Info("access log reopened", {{"path", access_log_->path()}});
        }
        if (std::string error; !log::ProcessLog().Reopen(&error)) {
          log::Error("event log not reopened, writing on to the old file", {{"error", error}});
        }
      });
      await_reopen();
    });
  };
  await_reopen();

  signals.async_wait([&](boost::system::error_code ec, int signal) {
    if (ec) return;
    log::Info("draining", {{"signal", signal == SIGINT ? "SIGINT" : "SIGTERM"},
                           {"in_flight", context_->requests_in_flight.load()},
                           {"connections", context_->open_connections.load()},
                           {"deadline_ms", config_.timeouts.shutdown_drain.count()}});
    reload_signal.cancel();  // lets ioc run out of work once drained
    reopen_signal.cancel();
    NotifyStopping();
    context_->accepting = false;
    context_->draining = true;
    // Long-poll acquires answer 503 at once instead of holding the drain up.
    if (lock_service_) lock_service_->CancelAllWaiters();
    for (auto& thread : threads_) thread->BeginDrain();
    deadline = std::chrono::steady_clock::now() + config_.timeouts.shutdown_drain;
    check_drained();
  });
  ioc.run();
  HeldSignalMask(SIG_BLOCK);  // pending, not fatal, once the signal_set is gone

  Shutdown();
  log::Info("stopped", {{"exit_code", exit_code}});
  return exit_code;
}

}  // namespace fencegate::gateway
