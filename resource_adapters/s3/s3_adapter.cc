#include "resource_adapters/s3/s3_adapter.h"

#include <utility>

#include "resource_adapters/s3/bucket_conditions.h"
#include "resource_adapters/s3/bucket_probes.h"
#include "resource_adapters/s3/s3_exchange.h"
#include "resource_adapters/transport/backend_servers.h"
#include "resource_adapters/transport/server_connection_pools.h"

namespace fencegate::adapters {

namespace {

// The adapter of one network thread; its version cache and connection pool are touched only
// from that thread.
class S3Adapter : public ResourceAdapter {
 public:
  S3Adapter(boost::asio::io_context& ioc, std::shared_ptr<s3::Backend> backend,
            std::shared_ptr<BackendMonitor> monitor,
            std::shared_ptr<s3::BucketConditions> conditions)
      : ioc_(ioc),
        backend_(std::move(backend)),
        thread_state_(
            std::make_shared<s3::ThreadState>(backend_->options.version_cache_entries, conditions)),
        cache_(thread_state_, &thread_state_->versions),
        pools_(std::make_shared<ServerConnectionPools>(backend_->endpoint.servers,
                                                       backend_->options.max_idle_connections,
                                                       backend_->options.idle_timeout)),
        monitor_(std::move(monitor)) {
    if (conditions->options().policy == ConditionProbeOptions::Policy::kVerify &&
        conditions->ClaimSchedule()) {
      probe_schedule_ = s3::ProbeSchedule::Start({ioc_, backend_, pools_, conditions});
    }
  }

  ~S3Adapter() override { Stop(); }

  // A DeleteObjects names its objects in its body (s3_multi_delete.cc).
  bool NamesResourcesInBody(const RequestHeader& header) const override {
    // Asked for every fenced write: only a POST with a query is parsed.
    if (header.method() != http::verb::post ||
        header.target().find('?') == boost::beast::string_view::npos) {
      return false;
    }
    s3::S3Request parsed;
    return !s3::ParseS3Request(header.method(), header.target(), &parsed) &&
           parsed.operation == s3::Operation::kMultiDelete;
  }

  void Forward(ForwardRequest request, Downstream& downstream, DoneHandler done) override {
    std::make_shared<s3::S3Exchange>(ioc_, backend_, cache_, pools_, thread_state_->gates, request,
                                     downstream, std::move(done))
        ->Start();
  }

  void Shutdown() override { Stop(); }

 private:
  void Stop() {
    pools_->CloseAll();
    StopMonitor(monitor_);
    if (probe_schedule_) probe_schedule_->Stop();
  }

  boost::asio::io_context& ioc_;
  std::shared_ptr<s3::Backend> backend_;
  std::shared_ptr<s3::ThreadState> thread_state_;
  std::shared_ptr<s3::VersionCache> cache_;  // aliases thread_state_->versions
  std::shared_ptr<ServerConnectionPools> pools_;
  // The start and interval probes of the buckets, when this thread's adapter was the first.
  std::shared_ptr<s3::ProbeSchedule> probe_schedule_;
  // The backend's health checks and resolves, when this thread's adapter was the first.
  std::shared_ptr<BackendMonitor> monitor_;
};

class S3AdapterFactory : public AdapterFactory {
 public:
  S3AdapterFactory(std::shared_ptr<s3::Backend> backend, std::shared_ptr<BackendServers> servers,
                   std::shared_ptr<s3::BucketConditions> conditions)
      : backend_(std::move(backend)),
        servers_(std::move(servers)),
        conditions_(std::move(conditions)) {}

  std::unique_ptr<ResourceAdapter> CreateForThread(boost::asio::io_context& ioc) override {
    return std::make_unique<S3Adapter>(ioc, backend_, servers_->StartMonitorOnce(ioc), conditions_);
  }

  std::string_view kind() const override { return "s3"; }

  std::shared_ptr<UpstreamServers> upstream_servers() const override { return servers_->servers; }

  std::shared_ptr<const ConditionBook> condition_book() const override {
    return conditions_->book();
  }

  void ProbeConditionsAgain() override { conditions_->ProbeAgain(); }

 private:
  std::shared_ptr<s3::Backend> backend_;
  std::shared_ptr<BackendServers> servers_;
  std::shared_ptr<s3::BucketConditions> conditions_;
};

}  // namespace

std::unique_ptr<AdapterFactory> MakeS3AdapterFactory(S3AdapterOptions options, std::string* error) {
  std::shared_ptr<BackendServers> servers = MakeBackendServers(options, error);
  if (!servers) return nullptr;
  auto backend = std::make_shared<s3::Backend>();
  backend->endpoint.servers = servers->servers;
  backend->endpoint.connect = servers->connect;
  for (std::size_t server = 0; server < servers->servers->size(); ++server) {
    const ServerAddress& address = servers->servers->address(server);
    backend->endpoint.host_headers.push_back(
        s3::HostHeader(address.host, address.port, address.tls));
  }
  backend->endpoint.region = options.region;
  backend->endpoint.credentials = {options.access_key, options.secret_key};
  backend->endpoint.connect_timeout = options.connect_timeout;
  backend->endpoint.response_timeout = options.response_timeout;
  backend->unquoted_etags = options.etag_quoting == EtagQuoting::kUnquoted;
  auto conditions =
      std::make_shared<s3::BucketConditions>(servers->servers->backend_name(), options.conditions);
  backend->options = std::move(options);
  return std::make_unique<S3AdapterFactory>(std::move(backend), std::move(servers),
                                            std::move(conditions));
}

}  // namespace fencegate::adapters
