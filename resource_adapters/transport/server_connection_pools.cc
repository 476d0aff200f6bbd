#include "resource_adapters/transport/server_connection_pools.h"

#include <utility>

namespace fencegate::adapters {

ServerConnectionPools::ServerConnectionPools(std::shared_ptr<UpstreamServers> servers,
                                             std::size_t max_idle,
                                             std::chrono::milliseconds idle_timeout)
    : servers_(std::move(servers)), none_tried_(servers_->size(), false) {
  pools_.reserve(servers_->size());
  for (std::size_t server = 0; server < servers_->size(); ++server) {
    pools_.emplace_back(max_idle, idle_timeout);
  }
}

std::unique_ptr<UpstreamConnection> ServerConnectionPools::Take(
    std::size_t server, UpstreamConnectionPool::Probe probe) {
  const std::uint64_t addresses = servers_->addresses_version(server);
  while (std::unique_ptr<UpstreamConnection> connection = pools_[server].Take(probe)) {
    if (connection->addresses_version() == addresses) return connection;
    // Made to an address the name may have left (a server moved behind its DNS name): closed,
    // so that new requests follow the name.
  }
  return nullptr;
}

void ServerConnectionPools::Give(std::unique_ptr<UpstreamConnection> connection) {
  const std::size_t server = connection->server();
  if (connection->addresses_version() != servers_->addresses_version(server)) return;
  pools_[server].Give(std::move(connection));
}

void ServerConnectionPools::CloseAll() {
  for (UpstreamConnectionPool& pool : pools_) pool.CloseAll();
}

}  // namespace fencegate::adapters
