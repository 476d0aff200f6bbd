#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "resource_adapters/webdav/dav_connection.h"

namespace fencegate::adapters::webdav {

// The adapter's idle control connections to the WebDAV server, owned by one network thread
// (no locking): a fenced write takes one for its LOCK .. UNLOCK sequence and gives it back,
// so writes in a row cost no TCP handshake each. Last in, first out: the most recently used
// connection is the least likely to have been closed by the server's keep-alive timeout.
class DavConnectionPool {
 public:
  DavConnectionPool(boost::asio::io_context& ioc, std::shared_ptr<const WebdavBackend> backend,
                    std::shared_ptr<ServerConnectionPools> pools);

  // An idle connection to `server` that is neither older than idle_timeout nor visibly closed
  // or out of step (anything to read while idle), else a new, unconnected one.
  std::shared_ptr<DavConnection> Take(std::size_t server);

  // Keeps `connection` when it is Reusable(); the oldest is closed when max_idle_connections
  // are kept already, and any idle past idle_timeout are closed now.
  void Give(std::shared_ptr<DavConnection> connection);

  void CloseAll();

  ServerConnectionPools& server_pools() const { return *pools_; }

 private:
  struct Idle {
    std::shared_ptr<DavConnection> connection;
    std::chrono::steady_clock::time_point since;
  };
  bool Expired(const Idle& idle, std::chrono::steady_clock::time_point now) const;

  boost::asio::io_context& ioc_;
  std::shared_ptr<const WebdavBackend> backend_;
  std::shared_ptr<ServerConnectionPools> pools_;
  std::vector<Idle> idle_;  // oldest first, every server's
};

}  // namespace fencegate::adapters::webdav
