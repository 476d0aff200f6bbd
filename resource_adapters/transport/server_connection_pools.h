#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

#include "resource_adapters/transport/upstream_connection_pool.h"
#include "resource_adapters/transport/upstream_servers.h"

namespace fencegate::adapters {

// One network thread's share of a backend: a keep-alive pool per server (max_idle and
// idle_timeout apply to each) and the thread's round-robin cursor. Touched only from its
// thread, so taking and giving connections needs no lock.
class ServerConnectionPools {
 public:
  ServerConnectionPools(std::shared_ptr<UpstreamServers> servers, std::size_t max_idle,
                        std::chrono::milliseconds idle_timeout);
  ~ServerConnectionPools() { CloseAll(); }
  ServerConnectionPools(const ServerConnectionPools&) = delete;
  ServerConnectionPools& operator=(const ServerConnectionPools&) = delete;

  UpstreamServers& servers() const { return *servers_; }
  std::size_t idle_count(std::size_t server) const { return pools_[server].idle_count(); }
  // An idle connection to `server` made to an address its name still resolves to, or null.
  std::unique_ptr<UpstreamConnection> Take(std::size_t server, UpstreamConnectionPool::Probe probe);
  // Keeps `connection` in its server's pool (unless the server's addresses changed since it
  // was made).
  void Give(std::unique_ptr<UpstreamConnection> connection);

  UpstreamServers::PickCursor& cursor() { return cursor_; }
  // A request's first pick has tried no server yet; one vector per thread spares it an
  // allocation.
  const std::vector<bool>& none_tried() const { return none_tried_; }

  void CloseAll();

 private:
  const std::shared_ptr<UpstreamServers> servers_;
  std::vector<UpstreamConnectionPool> pools_;
  UpstreamServers::PickCursor cursor_;
  const std::vector<bool> none_tried_;
};

}  // namespace fencegate::adapters
