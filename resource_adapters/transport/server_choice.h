#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/system/error_code.hpp>

#include "base/tls_client/client_tls_options.h"
#include "resource_adapters/adapter.h"
#include "resource_adapters/transport/server_connection_pools.h"
#include "resource_adapters/transport/upstream_connection.h"

namespace fencegate::adapters {

// How connections to a backend's servers are opened; shared by every request of the backend.
struct ServerConnectSettings {
  std::shared_ptr<boost::asio::ssl::context> tls_context;  // null: plain servers
  tls_client::ClientTlsOptions tls_options;  // server_name empty: each server's own host
  std::chrono::milliseconds connect_timeout{5000};
};

// What ServerChoice::Open ends with: a connection to the request's server, or why none.
struct OpenedConnection {
  std::unique_ptr<UpstreamConnection> connection;  // null on failure
  bool reused = false;  // an idle connection of a server the request moved to
  // The failure: kUpstreamConnect with the last connect error, and the problem to answer
  // (503 no-healthy-backend or backend-overloaded, or 502 upstream-tls-failed /
  // upstream-connect-failed for a request held to its server).
  ForwardOutcome::Failure failure = ForwardOutcome::Failure::kNone;
  boost::system::error_code error;
  std::optional<Problem> problem;

  static OpenedConnection Connected(std::unique_ptr<UpstreamConnection> connection, bool reused);
  static OpenedConnection Failed(ForwardOutcome::Failure failure, boost::system::error_code error,
                                 std::optional<Problem> problem);
};

// Which server of its backend one request goes to, shared by the http, s3 and webdav
// adapters: the pick (the thread's cursor, the request's fence key), the request counted in
// flight there (max_pending) from Begin until destruction, and connections opened with
// failover. A server that cannot be reached (refused, unreachable, timed out, TLS refused)
// has received no byte of the request, so the request moves to another usable server; once a
// byte was sent the caller never opens again on another server (the fence admitted the write
// once). One per request, on its network thread.
class ServerChoice {
 public:
  using OpenHandler = std::function<void(OpenedConnection)>;

  ServerChoice(boost::asio::io_context& ioc, ServerConnectionPools& pools,
               const ServerConnectSettings& settings);
  ~ServerChoice();
  ServerChoice(const ServerChoice&) = delete;
  ServerChoice& operator=(const ServerChoice&) = delete;

  // Picks the request's server (`pinned`: that one, a step of a sequence that must stay on one
  // server; it never moves) and counts the request in flight there. A problem: no usable
  // server (503 no-healthy-backend, Retry-After until the first ejection ends) or the
  // backend's max_pending reached (503 backend-overloaded). `fence_key` must outlive this.
  std::optional<Problem> Begin(std::string_view fence_key,
                               std::optional<std::size_t> pinned = std::nullopt);

  // Holds the choice to `server` without counting a request there: the connections of a
  // sequence whose request is counted elsewhere (a webdav fenced write's lock requests). Open
  // never moves from it.
  void Hold(std::size_t server) {
    server_ = server;
    pinned_ = true;
  }

  std::size_t server() const { return server_; }
  // The configured url of the server (config-lifetime storage).
  std::string_view server_url() const;
  UpstreamServers& servers() const { return pools_.servers(); }

  // An idle connection to the server, or null.
  std::unique_ptr<UpstreamConnection> TakeIdle(UpstreamConnectionPool::Probe probe) {
    return pools_.Take(server_, probe);
  }
  void Give(std::unique_ptr<UpstreamConnection> connection) { pools_.Give(std::move(connection)); }

  // Opens a new connection to the server; on a failure to reach it, reports the server and
  // moves the request to another usable one (its idle connection, else a new one), unless
  // pinned. `handler` runs once, never inside the call.
  void Open(OpenHandler handler);
  // Abandons an Open in progress (the exchange failed meanwhile): its handler still runs,
  // with operation_aborted.
  void Cancel();

  // For a sequence held to its server (Hold or a pinned Begin) whose first step could not reach
  // it (reported already by the connection that tried): nothing was sent, so the request moves
  // to another usable server it has not tried, counted in flight there. A problem when none is
  // left (503 no-healthy-backend) or max_pending refuses it.
  std::optional<Problem> MoveAfterUnreachable();

  // The request is no longer in flight at its server (the exchange ended); destruction does it
  // otherwise. Exactly once, whichever comes first.
  void End() { EndRequest(); }

  // A response header arrived from the server (passive health).
  void OnResponse(unsigned status) { servers().OnResponse(server_, status); }

 private:
  void OpenOnServer();
  void ConnectTo(std::shared_ptr<const UpstreamServers::Endpoints> endpoints);
  void Handshake();
  // The server could not be reached: report it and try another one, or give up.
  void OnUnreachable(boost::system::error_code ec, bool tls);
  // Moves the in-flight count to `server`; the problem when max_pending refuses it there.
  std::optional<Problem> MoveTo(std::size_t server);
  void Deliver(OpenedConnection result);
  Problem NoHealthyBackend() const;
  void EndRequest();

  boost::asio::io_context& ioc_;
  ServerConnectionPools& pools_;
  const ServerConnectSettings& settings_;
  std::string_view fence_key_;
  std::size_t server_ = 0;
  bool counted_ = false;  // the request is counted in flight at server_
  bool pinned_ = false;
  bool cancelled_ = false;
  OpenHandler handler_;
  std::unique_ptr<UpstreamConnection> opening_;
  std::vector<bool> tried_;  // allocated at the first failure only
};

// The answers of ServerChoice, for the adapters' own refusals.
Problem BackendOverloadedProblem(std::string_view backend, std::string_view limit);

}  // namespace fencegate::adapters
