#include "resource_adapters/transport/backend_servers.h"

#include <utility>

#include "base/tls_client/client_tls.h"
#include "resource_adapters/transport/resolve_once.h"

namespace fencegate::adapters {

namespace {

ServerAddress OneServer(const UpstreamOptions& options) {
  const std::string host =
      options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
  return ServerAddress{
      .url = (options.tls ? "https://" : "http://") + host + ":" + std::to_string(options.port),
      .host = options.host,
      .port = options.port,
      .tls = options.tls};
}

}  // namespace

std::shared_ptr<BackendMonitor> BackendServers::StartMonitorOnce(boost::asio::io_context& ioc) {
  if (monitor_started.exchange(true)) return nullptr;
  return BackendMonitor::Start(ioc, servers, connect.tls_context, connect.tls_options);
}

bool MakeConnectSettings(const UpstreamOptions& options, const UpstreamServers& servers,
                         ServerConnectSettings* connect, std::string* error) {
  bool any_tls = false;
  for (std::size_t server = 0; server < servers.size(); ++server) {
    any_tls = any_tls || servers.address(server).tls;
  }
  if (any_tls) {
    std::string tls_error;
    connect->tls_context = tls_client::BuildClientContext(options.tls_options, &tls_error);
    if (!connect->tls_context) {
      if (error != nullptr) *error = tls_error;
      return false;
    }
  }
  connect->tls_options = options.tls_options;
  connect->connect_timeout = options.connect_timeout;
  return true;
}

std::shared_ptr<BackendServers> MakeBackendServers(const UpstreamOptions& options,
                                                   std::string* error) {
  BalancingOptions balancing = options.balancing;
  if (balancing.servers.empty()) balancing.servers.push_back(OneServer(options));
  auto backend = std::make_shared<BackendServers>();
  std::string name = options.backend_name.empty()
                         ? options.host + ":" + std::to_string(options.port)
                         : options.backend_name;
  backend->servers = std::make_shared<UpstreamServers>(std::move(name), std::move(balancing));
  if (!MakeConnectSettings(options, *backend->servers, &backend->connect, error)) return nullptr;
  UpstreamServers& servers = *backend->servers;
  for (std::size_t server = 0; server < servers.size(); ++server) {
    const ServerAddress& address = servers.address(server);
    servers.SetEndpoints(server, ResolveOnce(address.host, address.port));
  }
  return backend;
}

void StopMonitor(std::shared_ptr<BackendMonitor>& monitor) {
  if (monitor) {
    monitor->Stop();
    monitor.reset();
  }
}

}  // namespace fencegate::adapters
