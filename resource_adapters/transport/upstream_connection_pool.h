#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "resource_adapters/transport/upstream_transport.h"

namespace fencegate::adapters {

// Idle keep-alive connections (plain or TLS) to one backend, owned by one network thread's
// adapter (no locking); http and s3 backends. Last in, first out: the most recently used
// connection is the least likely to have been closed by the backend's own idle timeout (radosgw's
// beast frontend: 65 s), and the oldest ones age out.
class UpstreamConnectionPool {
 public:
  using Stream = UpstreamTransport;

  // How Take learns whether the backend closed an idle connection.
  enum class Probe {
    // One non-blocking recv with MSG_PEEK before the connection is handed out: for a request
    // that must not be sent twice.
    kPeek,
    // None: a closed connection shows itself on use, and the caller sends the request again on
    // a fresh one. Only for a request that may be sent twice (no body, no side effects); it
    // spares a system call per reused connection, as most reused connections are alive.
    kOnUse,
  };

  UpstreamConnectionPool(std::size_t max_idle, std::chrono::milliseconds idle_timeout);

  // The most recently returned connection that is not expired (and, with kPeek, not visibly
  // closed by the backend), or null. A connection can still turn out stale on use: the backend
  // may close it while our request is in flight.
  std::unique_ptr<Stream> Take(Probe probe);

  // Keeps `stream` for reuse, its timer cleared; the oldest connection is closed when the pool
  // is full.
  void Give(std::unique_ptr<Stream> stream);

  void CloseAll();

  std::size_t idle_count() const { return idle_.size(); }

 private:
  struct IdleConnection {
    std::unique_ptr<Stream> stream;
    std::chrono::steady_clock::time_point idle_since;
  };

  const std::size_t max_idle_;
  const std::chrono::milliseconds idle_timeout_;
  std::vector<IdleConnection> idle_;  // oldest first
};

}  // namespace fencegate::adapters
