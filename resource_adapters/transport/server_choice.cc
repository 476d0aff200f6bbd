#include "resource_adapters/transport/server_choice.h"

#include <string>
#include <utility>

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream_base.hpp>

#include "base/tls_client/client_tls.h"

namespace fencegate::adapters {

namespace {

using boost::system::error_code;
using Failure = ForwardOutcome::Failure;

}  // namespace

OpenedConnection OpenedConnection::Connected(std::unique_ptr<UpstreamConnection> connection,
                                             bool reused) {
  OpenedConnection opened;
  opened.connection = std::move(connection);
  opened.reused = reused;
  return opened;
}

OpenedConnection OpenedConnection::Failed(ForwardOutcome::Failure failure, error_code error,
                                          std::optional<Problem> problem) {
  OpenedConnection opened;
  opened.failure = failure;
  opened.error = error;
  opened.problem = std::move(problem);
  return opened;
}

Problem BackendOverloadedProblem(std::string_view backend, std::string_view limit) {
  return Problem{.status = 503,
                 .type = "backend-overloaded",
                 .title = "Service Unavailable",
                 .detail = "backend " + std::string(backend) + " is at its limits." +
                           std::string(limit) + "; retry",
                 .retry_after = true};
}

ServerChoice::ServerChoice(boost::asio::io_context& ioc, ServerConnectionPools& pools,
                           const ServerConnectSettings& settings)
    : ioc_(ioc), pools_(pools), settings_(settings) {}

ServerChoice::~ServerChoice() { EndRequest(); }

void ServerChoice::EndRequest() {
  if (counted_) {
    counted_ = false;
    servers().EndRequest(server_);
  }
}

std::string_view ServerChoice::server_url() const { return servers().address(server_).url; }

std::optional<Problem> ServerChoice::Begin(std::string_view fence_key,
                                           std::optional<std::size_t> pinned) {
  fence_key_ = fence_key;
  if (pinned) {
    pinned_ = true;
    server_ = *pinned;
  } else {
    const std::optional<std::size_t> picked =
        servers().Pick(fence_key, pools_.none_tried(), pools_.cursor());
    if (!picked) return NoHealthyBackend();
    server_ = *picked;
  }
  if (!servers().TryBeginRequest(server_)) {
    return BackendOverloadedProblem(servers().backend_name(), "max_pending");
  }
  counted_ = true;
  return std::nullopt;
}

Problem ServerChoice::NoHealthyBackend() const {
  servers().CountNoHealthyServer();
  return Problem{
      .status = 503,
      .type = "no-healthy-backend",
      .title = "Service Unavailable",
      .detail = "no server of backend " + servers().backend_name() + " is usable now; retry",
      .retry_after = true,
      .retry_after_seconds = static_cast<std::uint32_t>(servers().RetryAfter().count())};
}

void ServerChoice::Open(OpenHandler handler) {
  handler_ = std::move(handler);
  cancelled_ = false;
  OpenOnServer();
}

void ServerChoice::OpenOnServer() {
  UpstreamServers& servers = this->servers();
  if (!servers.TryOpenConnection(server_)) {
    // Not a failure of the server: every server shares the limit, so the request fails here.
    // Posted: the handler never runs inside Open.
    boost::asio::post(ioc_, [this] {
      Deliver(OpenedConnection::Failed(
          Failure::kNone, {},
          BackendOverloadedProblem(this->servers().backend_name(), "max_connections")));
    });
    return;
  }
  const ServerAddress& address = servers.address(server_);
  // The version before the addresses: a change in between makes the connection look older
  // than it is (not reused), never newer.
  const std::uint64_t addresses_version = servers.addresses_version(server_);
  std::shared_ptr<const UpstreamServers::Endpoints> endpoints = servers.endpoints(server_);
  opening_ = std::make_unique<UpstreamConnection>(
      ioc_, address.tls ? settings_.tls_context : nullptr, server_, addresses_version,
      ServerConnectionSlot(&servers, server_));
  if (endpoints && !endpoints->empty()) {
    ConnectTo(std::move(endpoints));
    return;
  }
  // The name has not resolved yet. Names are looked up by the backend's monitor only (a
  // network thread's io_context cannot run Asio's resolver), every second until they resolve:
  // until then the server cannot be reached, and the request moves on as from a refused one.
  boost::asio::post(ioc_, [this] { OnUnreachable(boost::asio::error::host_not_found, false); });
}

void ServerChoice::ConnectTo(std::shared_ptr<const UpstreamServers::Endpoints> endpoints) {
  opening_->expires_after(settings_.connect_timeout);
  const UpstreamServers::Endpoints& sequence = *endpoints;
  opening_->lowest().async_connect(
      sequence, [this, endpoints = std::move(endpoints)](error_code ec,
                                                         const boost::asio::ip::tcp::endpoint&) {
        if (ec) {
          OnUnreachable(ec, false);
          return;
        }
        // A streamed body goes out in several writes; Nagle would hold a piece back for the
        // server's delayed ACK.
        error_code ignored;
        opening_->socket().set_option(boost::asio::ip::tcp::no_delay(true), ignored);
        Handshake();
      });
}

// https servers: the certificate must chain to the configured CA and, unless turned off, name
// this server; a refusal is a failure to reach it, never a fallback to plain HTTP.
void ServerChoice::Handshake() {
  if (!opening_->is_tls()) {
    opening_->lowest().expires_never();
    Deliver(OpenedConnection::Connected(std::move(opening_), false));
    return;
  }
  tls_client::PrepareClientHandshake(settings_.tls_options, servers().address(server_).host,
                                     opening_->tls().native_handle());
  opening_->expires_after(settings_.connect_timeout);
  opening_->tls().async_handshake(boost::asio::ssl::stream_base::client, [this](error_code ec) {
    if (ec) {
      OnUnreachable(ec, true);
      return;
    }
    opening_->lowest().expires_never();
    Deliver(OpenedConnection::Connected(std::move(opening_), false));
  });
}

void ServerChoice::OnUnreachable(error_code ec, bool tls) {
  opening_.reset();
  if (cancelled_) {
    Deliver(OpenedConnection::Failed(Failure::kUpstreamConnect,
                                     boost::asio::error::operation_aborted, std::nullopt));
    return;
  }
  UpstreamServers& servers = this->servers();
  servers.OnConnectFailed(server_, tls);
  const std::string why = (tls ? "TLS handshake with server " : "cannot connect to server ") +
                          servers.address(server_).url + " of backend " + servers.backend_name() +
                          " failed: " + ec.message();
  if (pinned_) {
    Deliver(OpenedConnection::Failed(
        Failure::kUpstreamConnect, ec,
        Problem{502, tls ? "upstream-tls-failed" : "upstream-connect-failed", "Bad Gateway", why}));
    return;
  }
  if (tried_.empty()) tried_.assign(servers.size(), false);
  tried_[server_] = true;
  const std::optional<std::size_t> next = servers.Pick(fence_key_, tried_, pools_.cursor());
  if (!next) {
    // A refused certificate is a configuration to fix, not a server to wait for.
    Problem problem =
        tls ? Problem{502, "upstream-tls-failed", "Bad Gateway", why} : NoHealthyBackend();
    if (!tls) problem.detail += " (" + why + ")";
    Deliver(OpenedConnection::Failed(Failure::kUpstreamConnect, ec, std::move(problem)));
    return;
  }
  servers.CountRetry(tls);
  if (std::optional<Problem> refused = MoveTo(*next)) {
    Deliver(OpenedConnection::Failed(Failure::kNone, {}, std::move(*refused)));
    return;
  }
  if (auto idle = pools_.Take(server_, UpstreamConnectionPool::Probe::kPeek)) {
    Deliver(OpenedConnection::Connected(std::move(idle), true));
    return;
  }
  OpenOnServer();
}

std::optional<Problem> ServerChoice::MoveTo(std::size_t server) {
  EndRequest();
  server_ = server;
  if (!servers().TryBeginRequest(server_)) {
    return BackendOverloadedProblem(servers().backend_name(), "max_pending");
  }
  counted_ = true;
  return std::nullopt;
}

std::optional<Problem> ServerChoice::MoveAfterUnreachable() {
  UpstreamServers& servers = this->servers();
  if (tried_.empty()) tried_.assign(servers.size(), false);
  tried_[server_] = true;
  const std::optional<std::size_t> next = servers.Pick(fence_key_, tried_, pools_.cursor());
  if (!next) return NoHealthyBackend();
  servers.CountRetry(false);
  return MoveTo(*next);
}

void ServerChoice::Cancel() {
  cancelled_ = true;
  if (opening_) {
    error_code ignored;
    opening_->socket().close(ignored);
  }
}

void ServerChoice::Deliver(OpenedConnection result) {
  auto handler = std::move(handler_);
  handler_ = nullptr;
  handler(std::move(result));
}

}  // namespace fencegate::adapters
