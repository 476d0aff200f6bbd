#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>

#include "base/tls_client/plain_or_tls_stream.h"
#include "resource_adapters/transport/upstream_servers.h"

namespace fencegate::adapters {

// One connection counted against its backend's max_connections
// (UpstreamServers::TryOpenConnection): released exactly once, when the connection that holds
// it is destroyed, whether it was in use, idle in a pool or failed. Empty: not counted.
class ServerConnectionSlot {
 public:
  ServerConnectionSlot() = default;
  ServerConnectionSlot(UpstreamServers* servers, std::size_t server)
      : servers_(servers), server_(server) {}
  ServerConnectionSlot(ServerConnectionSlot&& other) noexcept
      : servers_(std::exchange(other.servers_, nullptr)), server_(other.server_) {}
  ServerConnectionSlot& operator=(ServerConnectionSlot&& other) noexcept {
    if (this != &other) {
      Release();
      servers_ = std::exchange(other.servers_, nullptr);
      server_ = other.server_;
    }
    return *this;
  }
  ServerConnectionSlot(const ServerConnectionSlot&) = delete;
  ServerConnectionSlot& operator=(const ServerConnectionSlot&) = delete;
  ~ServerConnectionSlot() { Release(); }

 private:
  void Release() {
    if (servers_ != nullptr) std::exchange(servers_, nullptr)->ConnectionClosed(server_);
  }

  UpstreamServers* servers_ = nullptr;
  std::size_t server_ = 0;
};

// A connection to one server of an http, webdav or s3 backend: plain TCP or TLS over it, the
// index of the server it goes to (its pool, and whom its failures are reported to), and its
// slot in the backend's connection count. Pooled whole.
class UpstreamConnection : public tls_client::PlainOrTlsStream {
 public:
  UpstreamConnection(boost::asio::io_context& ioc,
                     std::shared_ptr<boost::asio::ssl::context> tls_context, std::size_t server,
                     std::uint64_t addresses_version, ServerConnectionSlot slot)
      : PlainOrTlsStream(ioc, std::move(tls_context)),
        server_(server),
        addresses_version_(addresses_version),
        slot_(std::move(slot)) {}

  std::size_t server() const { return server_; }
  // UpstreamServers::addresses_version of the server when the connection was made.
  std::uint64_t addresses_version() const { return addresses_version_; }

 private:
  const std::size_t server_;
  const std::uint64_t addresses_version_;
  ServerConnectionSlot slot_;
};

}  // namespace fencegate::adapters
