#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

#include <boost/beast/core/tcp_stream.hpp>

namespace fencegate::adapters::s3 {

// Idle keep-alive connections to the S3 backend, owned by one network thread's adapter (no
// locking). Last in, first out: the most recently used connection is the least likely to have
// been closed by the backend's own idle timeout (radosgw's beast frontend: 65 s).
class ConnectionPool {
 public:
  ConnectionPool(std::size_t max_idle, std::chrono::milliseconds idle_timeout);

  // The most recently returned connection that is neither expired nor visibly closed by the
  // backend, or null. It can still turn out closed on use (the backend may close it while the
  // request is on its way), which is why callers retry only what is safe to send again.
  std::unique_ptr<boost::beast::tcp_stream> Take();

  // Keeps `stream` for reuse; the oldest connection is closed when the pool is full.
  void Give(std::unique_ptr<boost::beast::tcp_stream> stream);

  void CloseAll();

 private:
  struct IdleConnection {
    std::unique_ptr<boost::beast::tcp_stream> stream;
    std::chrono::steady_clock::time_point idle_since;
  };

  const std::size_t max_idle_;
  const std::chrono::milliseconds idle_timeout_;
  std::vector<IdleConnection> idle_;  // oldest first
};

}  // namespace fencegate::adapters::s3
