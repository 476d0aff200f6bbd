#include "resource_adapters/webdav/dav_connection.h"

#include <string>
#include <utility>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

namespace fencegate::adapters::webdav {

namespace {

using boost::system::error_code;

// Responses to the adapter's own requests are small XML documents (or error pages).
constexpr std::uint64_t kMaxResponseBytes = 1 << 20;

}  // namespace

DavConnection::DavConnection(boost::asio::io_context& ioc,
                             std::shared_ptr<const WebdavBackend> backend,
                             std::shared_ptr<ServerConnectionPools> pools, std::size_t server)
    : backend_(std::move(backend)),
      pools_(std::move(pools)),
      connector_(ioc, *pools_, backend_->connect) {
  connector_.Hold(server);
}

DavConnection::~DavConnection() { Close(); }

DavConnection::Request DavConnection::MakeRequest(http::verb method, const std::string& target,
                                                  std::string body) const {
  const WebdavAdapterOptions& options = backend_->options;
  Request request{method, target, 11};
  const ServerAddress& address = backend_->servers->address(connector_.server());
  request.set(http::field::host, options.host_header.empty()
                                     ? address.host + ":" + std::to_string(address.port)
                                     : options.host_header);
  if (!body.empty()) {
    request.set(http::field::content_type, "application/xml; charset=utf-8");
    request.body() = std::move(body);
  }
  request.prepare_payload();
  return request;
}

void DavConnection::Send(Request request, Handler handler) {
  request_ = std::move(request);
  handler_ = std::move(handler);
  busy_ = true;
  resent_ = false;
  unreachable_.reset();
  reused_ = stream_ && stream_->is_open();
  if (reused_) {
    Write();
  } else {
    Connect();
  }
}

bool DavConnection::Reusable() const {
  if (busy_) return false;
  // Not to an address the server's name has left since the connection was made.
  return stream_ && stream_->is_open() &&
         stream_->addresses_version() == pools_->servers().addresses_version(stream_->server());
}

// A failure to reach the server is reported to UpstreamServers by the connector; the request
// fails, and the fenced write moves to another server if it was its first step.
void DavConnection::Connect() {
  Close();
  connector_.Open([self = shared_from_this()](OpenedConnection opened) {
    if (!opened.connection) {
      if (opened.failure == ForwardOutcome::Failure::kUpstreamConnect) {
        self->unreachable_ = std::move(opened.problem);
      }
      return self->Fail(opened.error, false);
    }
    self->stream_ = std::move(opened.connection);
    self->Write();
  });
}

void DavConnection::Write() {
  stream_->expires_after(backend_->options.response_timeout);
  http::async_write(*stream_, request_, [self = shared_from_this()](error_code ec, std::size_t) {
    if (ec) return self->Fail(ec, false);
    self->Read();
  });
}

void DavConnection::Read() {
  auto parser = std::make_shared<http::response_parser<http::string_body>>();
  parser->body_limit(kMaxResponseBytes);
  http::async_read(*stream_, buffer_, *parser,
                   [self = shared_from_this(), parser](error_code ec, std::size_t) {
                     if (ec) return self->Fail(ec, parser->got_some());
                     Response response = parser->release();
                     if (response.keep_alive()) {
                       self->stream_->lowest().expires_never();  // idle now: no deadline
                     } else {
                       self->Close();
                     }
                     self->busy_ = false;
                     auto handler = std::move(self->handler_);
                     handler({}, std::move(response));
                   });
}

// A server closes an idle keep-alive connection without reading what arrives after; when that
// crosses our request (end of stream or a reset, not one byte of an answer, on a connection
// that was idle before), the request was not processed, and it is sent once more on a new
// connection, as HTTP clients do. Anything else fails the request.
void DavConnection::Fail(error_code ec, bool got_some) {
  const bool closed_while_idle =
      ec == http::error::end_of_stream || ec == boost::asio::error::eof ||
      ec == boost::asio::error::connection_reset || ec == boost::asio::error::broken_pipe ||
      ec == boost::asio::ssl::error::stream_truncated;  // TLS: closed without close_notify
  if (reused_ && !resent_ && !got_some && closed_while_idle) {
    resent_ = true;
    return Connect();
  }
  Close();
  busy_ = false;
  auto handler = std::move(handler_);
  handler(ec, Response{});
}

// No TLS close_notify: a control connection is dropped only when idle, failed or closed by
// the server, where nobody reads it.
void DavConnection::Close() {
  if (!stream_) return;
  error_code ignored;
  stream_->socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
  stream_->close();
  stream_.reset();
  buffer_.clear();
}

}  // namespace fencegate::adapters::webdav
