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

void ServerConnectionPools::Give(std::unique_ptr<UpstreamConnection> connection) {
  pools_[connection->server()].Give(std::move(connection));
}

void ServerConnectionPools::CloseAll() {
  for (UpstreamConnectionPool& pool : pools_) pool.CloseAll();
}

}  // namespace fencegate::adapters
