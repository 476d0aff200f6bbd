#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "base/tls_client/plain_or_tls_stream.h"
#include "resource_adapters/transport/server_choice.h"
#include "resource_adapters/transport/server_connection_pools.h"
#include "resource_adapters/webdav/own_locks.h"
#include "resource_adapters/webdav/webdav_adapter.h"

namespace fencegate::adapters::webdav {

namespace http = boost::beast::http;

// What every exchange of one backend shares; immutable after the factory built it.
struct WebdavBackend {
  WebdavAdapterOptions options;
  // The backend's servers: the passthrough's (one UpstreamServers per backend).
  std::shared_ptr<UpstreamServers> servers;
  // How the lock sequence connects (the webdav options' TLS settings); shared by every
  // connection of every thread.
  ServerConnectSettings connect;
  // The locks the fenced writes of every thread hold or ask for, and their owner mark.
  std::shared_ptr<OwnLocks> own_locks = std::make_shared<OwnLocks>();
};

// One keep-alive connection to one server of the backend for the adapter's own small requests
// (LOCK, PROPFIND, PROPPATCH, UNLOCK), sent one after another by one fenced write at a time and
// kept between writes by DavConnectionPool; bodies are small, so they are held whole. Connects
// (and reconnects) only to its server, through ServerChoice. Reconnects when the server
// closed the connection between requests. Over TLS for an https server: the certificate must
// chain to the configured CA and name the server (unless turned off); a refusal fails the
// request like a refused connection.
class DavConnection : public std::enable_shared_from_this<DavConnection> {
 public:
  using Request = http::request<http::string_body>;
  using Response = http::response<http::string_body>;
  using Handler = std::function<void(boost::system::error_code, Response)>;

  DavConnection(boost::asio::io_context& ioc, std::shared_ptr<const WebdavBackend> backend,
                std::shared_ptr<ServerConnectionPools> pools, std::size_t server);
  ~DavConnection();

  // A request for `target` with Host and (when `body` is not empty) an XML body.
  Request MakeRequest(http::verb method, const std::string& target, std::string body) const;

  // Sends `request` and reads the response; errors are connect, timeout or protocol errors.
  void Send(Request request, Handler handler);

  void Close();

  std::size_t server() const { return connector_.server(); }

  // True when the last response was read whole, the server keeps the connection open, and no
  // request is outstanding: only then may another write use it.
  bool Reusable() const;
  // Set when the last Send failed before any byte went out, because the server could not be
  // reached (refused, unreachable, timed out, TLS handshake failed): the connector's problem.
  const std::optional<Problem>& unreachable() const { return unreachable_; }
  // The raw socket, for the pool's check that nothing (not even end-of-stream) is waiting.
  tls_client::TcpStream::socket_type& socket() { return stream_->socket(); }

 private:
  void Connect();
  void Read();
  void Write();
  void Fail(boost::system::error_code ec, bool got_some);

  std::shared_ptr<const WebdavBackend> backend_;
  std::shared_ptr<ServerConnectionPools> pools_;  // kept alive for connector_
  ServerChoice connector_;
  // While connected: plain, or TLS for an https server. Every operation is timed.
  std::unique_ptr<UpstreamConnection> stream_;
  boost::beast::flat_buffer buffer_;
  Request request_;
  Response response_;
  Handler handler_;
  bool busy_ = false;
  // This request went out on a connection an earlier request had used; `resent_` once it was
  // sent again on a new connection (see Fail).
  bool reused_ = false;
  bool resent_ = false;
  std::optional<Problem> unreachable_;
};

}  // namespace fencegate::adapters::webdav
