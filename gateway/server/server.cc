#include "gateway/server/server.h"

#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "gateway/server/listen_socket.h"
#include "gateway/http/request_fields.h"
#include "gateway/cli/store_command.h"
#include "gateway/http/time_format.h"
#include "lockstore/etcd/etcd_fence_store.h"
#include "lockstore/etcd/etcd_lock_service.h"
#include "lockstore/etcd/etcd_token_verifier.h"
#include "lockstore/rocksdb/rocksdb_fence_store.h"
#include "resource_adapters/http/http_adapter.h"
#include "resource_adapters/registry.h"
#include "base/tls_client/client_tls.h"

namespace fencegate::gateway {
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// How often the drain checks whether everything in flight has finished.
constexpr auto kDrainPoll = std::chrono::milliseconds(10);

bool ResolveListenAddress(const ListenAddress& address, tcp::endpoint* out, std::string* error) {
  const std::string host = address.host == "localhost" ? "127.0.0.1" : address.host;
  boost::system::error_code ec;
  const auto ip = net::ip::make_address(host, ec);
  if (ec) {
    *error = "invalid listen host '" + address.host + "': " + ec.message();
    return false;
  }
  *out = tcp::endpoint(ip, address.port);
  return true;
}

std::string FormatEndpoint(const tcp::endpoint& endpoint) {
  const std::string host = endpoint.address().to_string();
  const std::string port = std::to_string(endpoint.port());
  return endpoint.address().is_v6() ? "[" + host + "]:" + port : host + ":" + port;
}

// Turning name verification off must be explicit (config) and loud (here, at every start).
void WarnIfUnverified(const std::string& name, const adapters::UpstreamOptions& upstream) {
  if (!upstream.tls || upstream.tls_options.verify_hostname) return;
  std::fprintf(stderr,
               "fencegate: WARNING: backend '%s': tls_verify_hostname is off: any certificate "
               "from the configured CA is accepted for %s\n",
               name.c_str(), upstream.host.c_str());
}

void ReopenSignalMask(int how) {
  sigset_t reopen;
  sigemptyset(&reopen);
  sigaddset(&reopen, SIGUSR1);
  pthread_sigmask(how, &reopen, nullptr);
}

}  // namespace

Server::Server(Config config) : config_(std::move(config)) {}

Server::~Server() {
  StopThreads();
  if (lock_service_) {
    if (lock_clock_) lock_clock_->Stop();  // no expiry or wait deadline fires from here on
    lock_service_->CancelAllWaiters();
    // Let grants in flight finish (they may still raise fences through admission_).
    if (store_) store_->Flush();
    lock_service_.reset();
  }
  cluster_.reset();  // revokes the lease: the shards move without waiting for the TTL
  admission_.reset();
}

bool Server::Start(std::string* error) {
  // Signals an operator's tools send that must never end the process (README "Signals"): a
  // closed pipe (SIGPIPE) and haproxy-style reloads (SIGUSR2) are ignored. Logrotate's SIGUSR1
  // stays pending (blocked here, in every thread started from here on) until RunUntilSignal
  // takes it up, so one sent right after start-up still reopens the access log.
  for (const int ignored : {SIGPIPE, SIGUSR2}) std::signal(ignored, SIG_IGN);
  ReopenSignalMask(SIG_BLOCK);
  if (!OpenStore(error)) return false;
  const lockstore::Status log_status = AccessLog::Open(config_.access_log.path, &access_log_);
  if (!log_status.ok()) {
    *error = log_status.ToString();
    return false;
  }
  std::vector<std::string> route_names;
  for (const RouteConfig& route : config_.routes) route_names.push_back(route.name);
  const unsigned thread_count =
      config_.threads != 0 ? config_.threads : std::max(1u, std::thread::hardware_concurrency());
  metrics_ = std::make_unique<GatewayMetrics>(route_names, thread_count);
  router_ = std::make_unique<Router>(config_.routes);
  authorizer_ = std::make_unique<auth::Authorizer>(config_, metrics_->registry());
  admin_guard_ = std::make_unique<auth::AdminGuard>(config_.admin, metrics_->registry());
  for (const std::string& warning : auth::OpenAccessWarnings(config_)) {
    std::fprintf(stderr, "fencegate: warning: %s\n", warning.c_str());
  }

  lockstore::AdmissionOptions admission_options;
  admission_options.max_cached_keys = config_.store.cached_keys;
  admission_options.now_ms = [] { return NowUnixMs(); };
  admission_ = std::make_unique<lockstore::AdmissionController>(*store_, admission_options);

  context_.config = &config_;
  context_.router = router_.get();
  context_.store = store_.get();
  context_.admission = admission_.get();
  context_.metrics = metrics_.get();
  context_.access_log = access_log_.get();
  context_.auth = authorizer_.get();
  context_.admin_guard = admin_guard_.get();
  metrics_->store_ready().Set(store_->Ready() ? 1 : 0);
  if (etcd_store_ != nullptr) {
    etcd_metrics_ = std::make_unique<EtcdStoreMetrics>(metrics_->registry(), *etcd_store_);
    context_.refresh_store_metrics = [metrics = etcd_metrics_.get()] { metrics->Refresh(); };
  } else if (const auto* rocksdb =
                 dynamic_cast<const lockstore::RocksDbFenceStore*>(store_.get())) {
    rocksdb_metrics_ = std::make_unique<RocksDbStoreMetrics>(metrics_->registry(), *rocksdb);
    context_.refresh_store_metrics = [metrics = rocksdb_metrics_.get()] { metrics->Refresh(); };
  }
  if (!StartCluster(error)) return false;
  if (!StartLocks(error)) return false;
  if (!OpenIdempotencyStore(error)) return false;

  if (!LoadTls(error)) return false;
  if (!BuildAdapters(error)) return false;
  if (!StartTokenVerifiers(error)) return false;
  if (!Listen(error)) return false;
  for (auto& thread : threads_) thread->Start();
  admin_->Start();
  context_.accepting = true;
  return true;
}

bool Server::OpenStore(std::string* error) {
  if (config_.store.kind == "rocksdb") {
    // Before the data dir is created: whether it was brand new decides whether the store may be.
    if (!OpenRocksDbStore(error)) return false;
  } else if (config_.store.kind != "etcd") {
    *error = "unsupported store kind '" + config_.store.kind + "'";
    return false;
  }
  std::error_code fs_error;
  std::filesystem::create_directories(config_.data_dir, fs_error);
  if (fs_error) {
    *error = "cannot create data_dir " + config_.data_dir + ": " + fs_error.message();
    return false;
  }
  return config_.store.kind == "etcd" ? OpenEtcdStore(error) : true;
}

bool Server::OpenRocksDbStore(std::string* error) {
  lockstore::RocksDbFenceStoreOptions options;
  options.path = FenceStorePath(config_);
  // Made by the first start in a brand-new, empty data dir, or by `fencegate store init`; never
  // silently in place of one that was lost (store_identity.h).
  options.creation = lockstore::StoreCreation::kIfParentEmpty;
  options.block_cache_bytes = config_.store.block_cache_bytes;
  options.rejection_retention = config_.store.rejection_retention;
  options.rejection_queue = config_.store.rejection_queue;
  options.group_commit_wait = config_.store.group_commit_wait;
  // Store failures and recoveries are operator news: they go to the gateway's error log.
  options.log = [](std::string_view line) {
    std::fprintf(stderr, "fencegate: %.*s\n", static_cast<int>(line.size()), line.data());
  };
  const lockstore::Status status = lockstore::OpenRocksDbFenceStore(options, &store_);
  if (!status.ok()) {
    *error = "cannot open the fence store at " + options.path + ": " + status.ToString();
    return false;
  }
  return true;
}

bool Server::OpenEtcdStore(std::string* error) {
  lockstore::etcd::EtcdClientOptions& client = etcd_client_options_;
  client.endpoints = config_.store.endpoints;
  client.request_timeout = config_.store.request_timeout;
  client.operation_timeout = config_.store.operation_timeout;
  client.tls = config_.store.tls;
  if (client.tls) {
    // One context for the fence store and the etcd locks alike.
    client.tls_context = tls_client::BuildClientContext(*client.tls, error);
    if (!client.tls_context) {
      *error = "store.tls: " + *error;
      return false;
    }
    if (!client.tls->verify_hostname) {
      std::fprintf(stderr,
                   "fencegate: WARNING: store: tls.verify_hostname is off: any certificate from "
                   "the configured CA is accepted for every etcd member\n");
    }
  }
  lockstore::etcd::EtcdFenceStoreOptions options;
  options.client = client;
  options.prefix = config_.store.prefix;
  options.rejection_retention = config_.store.rejection_retention;
  options.log = [](std::string_view line) {
    std::fprintf(stderr, "fencegate: %.*s\n", static_cast<int>(line.size()), line.data());
  };
  std::unique_ptr<lockstore::etcd::EtcdFenceStore> store;
  const lockstore::Status status = lockstore::etcd::EtcdFenceStore::Open(options, &store);
  if (!status.ok()) {
    *error = "cannot open the etcd fence store: " + status.ToString();
    return false;
  }
  etcd_store_ = store.get();
  store_ = std::move(store);
  return true;
}

// Several replicas: shard ownership in etcd and the metrics that come with it.
bool Server::StartCluster(std::string* error) {
  if (!config_.cluster.enabled) return true;
  cluster_ = ReplicaCluster::Start(config_, *admission_, metrics_->registry(), error);
  if (!cluster_) return false;
  context_.cluster = cluster_.get();
  context_.refresh_store_metrics = [store = std::move(context_.refresh_store_metrics),
                                    cluster = cluster_.get()] {
    if (store) store();
    cluster->RefreshMetrics();
  };
  return true;
}

// Only when a route keeps idempotency records (mode store); its own database under data_dir.
bool Server::OpenIdempotencyStore(std::string* error) {
  bool needed = false;
  for (const RouteConfig& route : config_.routes) {
    if (route.idempotency && route.idempotency->mode == IdempotencyConfig::Mode::kStore) {
      needed = true;
    }
  }
  if (!needed) return true;
  lockstore::IdempotencyStoreOptions options;
  options.path = config_.data_dir + "/idempotency";
  options.log = [](std::string_view line) {
    std::fprintf(stderr, "fencegate: %.*s\n", static_cast<int>(line.size()), line.data());
  };
  options.now_ms = [] { return NowUnixMs(); };
  const lockstore::Status status = lockstore::IdempotencyStore::Open(options, &idempotency_);
  if (!status.ok()) {
    *error = "cannot open the idempotency store at " + options.path + ": " + status.ToString();
    return false;
  }
  context_.idempotency = idempotency_.get();
  return true;
}

bool Server::StartLocks(std::string* error) {
  if (!config_.locks.enabled) return true;
  lock_metrics_ = std::make_unique<LockMetrics>(metrics_->registry());
  lock_fencer_ = std::make_unique<lockstore::AdmissionLockFencer>(*admission_);
  if (etcd_store_ != nullptr) {
    StartEtcdLocks();
  } else if (!StartLockTable(error)) {
    return false;
  }
  if (!config_.locks.signing.empty()) {
    token_signer_ = std::make_unique<lockstore::TokenSigner>(
        config_.locks.signing, lockstore::LockRules(config_.locks.rules));
    context_.token_signer = token_signer_.get();
  }
  lock_api_ = std::make_unique<LockApi>(*lock_service_, config_.locks, token_signer_.get());
  context_.locks = lock_api_.get();
  context_.lock_table = lock_service_.get();
  return true;
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

bool Server::StartLockTable(std::string* error) {
  auto* persistence = dynamic_cast<lockstore::LockPersistence*>(store_.get());
  if (persistence == nullptr) {
    *error = "the fence store cannot keep lock state";
    return false;
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
    *error = "cannot load the lock table: " + loaded.ToString();
    return false;
  }
  lock_service_ = std::move(table);
  return true;
}

bool Server::LoadTls(std::string* error) {
  traffic_tls_ =
      std::make_unique<tls::ListenerTls>("traffic", config_.tls.traffic, metrics_->registry());
  admin_tls_ = std::make_unique<tls::ListenerTls>("admin", config_.tls.admin, metrics_->registry());
  context_.traffic_tls = traffic_tls_.get();
  return traffic_tls_->Load(error) && admin_tls_->Load(error);
}

bool Server::BuildAdapters(std::string* error) {
  std::vector<std::string> backend_names;
  std::vector<adapters::AdapterFactory*> factories;
  relay_budget_ = std::make_shared<adapters::RelayBudget>(config_.limits.relay_buffer_memory);
  relay_budget_metrics_ =
      std::make_unique<RelayBudgetMetrics>(metrics_->registry(), *relay_budget_);
  context_.relay_budget_metrics = relay_budget_metrics_.get();
  for (const auto& [name, backend] : config_.backends) {
    const adapters::BackendKindRow* kind = adapters::FindBackendKind(backend.kind);
    if (kind == nullptr) {
      *error = "backend '" + name + "' has unsupported kind '" + backend.kind + "'";
      return false;
    }
    auto factory = kind->make_factory(backend, relay_budget_, error);
    if (!factory) {
      *error = "backend '" + name + "': " + *error;
      return false;
    }
    if (const adapters::UpstreamOptions* upstream = kind->upstream(backend)) {
      WarnIfUnverified(name, *upstream);
    }
    factories_.push_back(std::move(factory));
    backend_names.push_back(name);
    factories.push_back(factories_.back().get());
  }
  context_.routes = ResolveRoutes(config_, backend_names, *metrics_);
  // Several replicas: one plain http adapter per peer, after the backends' adapters. The peer
  // gets the token in Fencing-Token, as the client sent it, and admits or refuses it itself.
  context_.peer_adapter_base = factories.size();
  if (cluster_) {
    // The owner answers within its barrier wait plus its own upstream timeout, or with 503/504.
    const auto owner_answers_within =
        config_.timeouts.barrier_wait + LongestUpstreamResponse(config_) + std::chrono::seconds(5);
    for (const ReplicaCluster::Peer& peer : cluster_->peers()) {
      adapters::HttpAdapterOptions options;
      options.host = peer.address.host == "localhost" ? "127.0.0.1" : peer.address.host;
      options.port = peer.address.port;
      options.forward_token_header = std::string(kFencingTokenField);
      options.response_timeout = owner_answers_within;
      factories_.push_back(adapters::MakeHttpAdapterFactory(options));
      factories.push_back(factories_.back().get());
    }
  }

  for (std::size_t i = 0; i < metrics_->thread_count(); ++i) {
    threads_.push_back(std::make_unique<NetworkThread>(context_, factories, i));
  }
  admin_ = std::make_unique<AdminServer>(context_, *admin_tls_);
  return true;
}

// One etcd client set per route with verify_tokens: routes may ask different lock services.
bool Server::StartTokenVerifiers(std::string* error) {
  for (std::size_t i = 0; i < config_.routes.size(); ++i) {
    const RouteConfig& route = config_.routes[i];
    if (!route.verify_tokens) continue;
    const TokenVerifyConfig& verify = *route.verify_tokens;
    lockstore::etcd::EtcdTokenVerifierOptions options;
    options.client.endpoints = verify.endpoints;
    // One bound for the whole check, shared so that a silent member leaves the others time.
    options.client.request_timeout =
        std::max(std::chrono::milliseconds(1),
                 verify.timeout / static_cast<std::int64_t>(verify.endpoints.size()));
    options.client.operation_timeout = verify.timeout;
    options.client.tls = verify.tls;
    if (verify.tls) {
      options.client.tls_context = tls_client::BuildClientContext(*verify.tls, error);
      if (!options.client.tls_context) {
        *error = "route '" + route.name + "': verify_tokens.etcd.tls: " + *error;
        return false;
      }
      if (!verify.tls->verify_hostname) {
        std::fprintf(stderr,
                     "fencegate: WARNING: route '%s': verify_tokens.etcd.tls.verify_hostname is "
                     "off: any certificate from the configured CA is accepted for every etcd "
                     "member\n",
                     route.name.c_str());
      }
    }
    token_verifiers_.push_back(
        std::make_unique<lockstore::etcd::EtcdTokenVerifier>(std::move(options)));
    context_.routes[i].token_verifier = token_verifiers_.back().get();
  }
  return true;
}

bool Server::Listen(std::string* error) {
  tcp::endpoint traffic;
  tcp::endpoint admin;
  if (!ResolveListenAddress(config_.listen, &traffic, error) ||
      !ResolveListenAddress(config_.admin_listen, &admin, error)) {
    return false;
  }
  // One listening socket for the process, one descriptor of it per network thread. The
  // original is closed on return; the threads' duplicates keep the socket open.
  net::io_context setup;
  tcp::acceptor listener(setup);
  if (!OpenListenSocket(listener, traffic, "traffic", error)) return false;
  for (auto& thread : threads_) {
    if (!thread->ShareListener(listener, error)) return false;
  }
  return admin_->Listen(admin, error);
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
  ReopenSignalMask(SIG_UNBLOCK);  // on this thread only: asio's handler takes it from here
  net::steady_timer poll(ioc);
  int exit_code = kExitOk;
  std::chrono::steady_clock::time_point deadline;

  std::function<void()> check_drained = [&] {
    const bool idle =
        context_.requests_in_flight.load() == 0 && context_.open_connections.load() == 0;
    if (idle) return;  // nothing left: ioc runs out of work and returns
    if (std::chrono::steady_clock::now() >= deadline) {
      if (context_.requests_in_flight.load() > 0) exit_code = kExitDrainCut;
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
      traffic_tls_->Reload();
      admin_tls_->Reload();
      await_reload();
    });
  };
  await_reload();

  // Opening the file blocks: it happens here, never on a network thread.
  std::function<void()> await_reopen = [&] {
    reopen_signal.async_wait([&](boost::system::error_code ec, int) {
      if (ec) return;
      const lockstore::Status reopened = access_log_->Reopen();
      if (!reopened.ok()) std::fprintf(stderr, "fencegate: %s\n", reopened.ToString().c_str());
      await_reopen();
    });
  };
  await_reopen();

  signals.async_wait([&](boost::system::error_code ec, int) {
    if (ec) return;
    reload_signal.cancel();  // lets ioc run out of work once drained
    reopen_signal.cancel();
    context_.accepting = false;
    context_.draining = true;
    // Long-poll acquires answer 503 at once instead of holding the drain up.
    if (lock_service_) lock_service_->CancelAllWaiters();
    for (auto& thread : threads_) thread->BeginDrain();
    deadline = std::chrono::steady_clock::now() + config_.timeouts.shutdown_drain;
    check_drained();
  });
  ioc.run();
  ReopenSignalMask(SIG_BLOCK);  // pending, not fatal, once the signal_set is gone

  StopThreads();
  const lockstore::Status flushed = store_->Flush();
  if (!flushed.ok()) {
    std::fprintf(stderr, "fencegate: flushing the fence store failed: %s\n",
                 flushed.ToString().c_str());
  }
  return exit_code;
}

void Server::StopThreads() {
  for (auto& thread : threads_) thread->Stop();
  for (auto& thread : threads_) thread->Join();
  for (auto& factory : factories_) factory->WaitForWorkBoundForNetworkThreads();
  if (admin_) admin_->Stop();
}

}  // namespace fencegate::gateway
