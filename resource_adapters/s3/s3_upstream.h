#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>

#include "base/net/http_header.h"
#include "base/net/message_parser.h"

#include "base/tls_client/client_tls.h"
#include "resource_adapters/s3/sigv4.h"
#include "resource_adapters/transport/server_choice.h"
#include "resource_adapters/transport/server_connection_pools.h"

namespace fencegate::adapters::s3 {

namespace http = boost::beast::http;

// Where and how requests to the backend go; shared by every call of one backend.
struct Endpoint {
  std::shared_ptr<UpstreamServers> servers;
  ServerConnectSettings connect;
  std::vector<std::string> host_headers;  // signed, one per server; see HostHeader
  std::string region;
  Credentials credentials;
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds response_timeout{60000};
};

// The Host field for `host` and `port`: the port only when it is not the scheme's default (as
// AWS's SDKs send it, so the signed value is the one the backend reconstructs), an IPv6
// address in brackets.
std::string HostHeader(std::string_view host, std::uint16_t port, bool tls);

// Produces the next piece of a streamed request body into `buffer`: `bytes` of it, `done` with
// the last piece (possibly empty).
using BodySource = std::function<boost::asio::awaitable<boost::system::error_code>(
    boost::asio::mutable_buffer buffer, std::size_t* bytes, bool* done)>;

// One request to the backend: signed with SigV4 (UNSIGNED-PAYLOAD), sent with a body held in
// memory or streamed from a source, and its response read piece by piece. Errors are returned,
// never thrown. The connection comes from the thread's pool when one idles there, and goes back
// to it at destruction only when the request went out whole and its response was read to the
// end; a request that failed on a reused connection is sent once more on a new one when that is
// safe (see MayRetry).
class UpstreamCall {
 public:
  // `fence_key` (the request's) picks the server under the fence_key policy; it must outlive
  // the call.
  UpstreamCall(boost::asio::io_context& ioc, const Endpoint& endpoint,
               std::shared_ptr<ServerConnectionPools> pools, std::string_view fence_key);
  ~UpstreamCall();
  UpstreamCall(const UpstreamCall&) = delete;
  UpstreamCall& operator=(const UpstreamCall&) = delete;

  // Takes or opens a connection, signs `header` (Host, X-Amz-Date, X-Amz-Content-Sha256,
  // Authorization are set here), writes it with `body` and reads the response header.
  boost::asio::awaitable<boost::system::error_code> Send(RequestHeader header,
                                                         std::string_view body);

  // Like Send, but the body (of the Content-Length `header` announces) comes piece by piece
  // from `source` through one buffer of `piece_size` bytes, so it is never held whole.
  boost::asio::awaitable<boost::system::error_code> SendStreamed(RequestHeader header,
                                                                 const BodySource& source,
                                                                 std::size_t piece_size);

  // The response; its header is valid after Send succeeded.
  const ResponseHeader& response() const { return parser_->get().base(); }

  // Reads the next piece of the response body into `buffer`; `done` once it is complete.
  boost::asio::awaitable<boost::system::error_code> ReadBody(boost::asio::mutable_buffer buffer,
                                                             std::size_t* bytes, bool* done);

  // Reads the rest of the body into `out`, keeping at most `limit` bytes of it.
  boost::asio::awaitable<boost::system::error_code> ReadWholeBody(std::string* out,
                                                                  std::size_t limit);

  // True when the connect or the TLS handshake failed (502), as opposed to a failure
  // mid-exchange.
  bool connect_failed() const { return connect_failed_; }
  // True when it was the TLS handshake (the backend's certificate, or its name, refused).
  bool tls_failed() const { return tls_failed_; }
  // The answer when no connection could be had: no usable server, the backend's limits, or
  // every server tried unreachable.
  const std::optional<Problem>& problem() const { return problem_; }
  // The server the call went to (its configured url); empty before one was picked.
  std::string_view server_url() const { return begun_ ? choice_.server_url() : std::string_view(); }

 private:
  // An idle connection from the pool, or (with `fresh`, or none idling) a new one.
  boost::asio::awaitable<boost::system::error_code> Open(bool fresh);
  // A copy of `header` with Host, X-Amz-Date, X-Amz-Content-Sha256 and Authorization set.
  RequestHeader Signed(const RequestHeader& header) const;
  boost::asio::awaitable<boost::system::error_code> ReadResponseHeader(http::verb method);
  // Whether a request that failed with `ec` may go out again on a new connection: only when the
  // failure was on a reused connection (the backend may have closed it just as the request
  // went out), before any byte of a response, not a timeout (a slow backend has the request),
  // and either nothing of the request was sent or it has no side effects (GET and HEAD without
  // a body). A conditional write is never sent again here: if the lost attempt was applied, a
  // second one could be answered as a conflict although the write happened.
  bool MayRetry(boost::system::error_code ec, std::size_t sent, http::verb method,
                bool has_body) const;
  // Drops the connection after a failure.
  void Discard();

  const Endpoint& endpoint_;
  std::shared_ptr<ServerConnectionPools> pools_;
  ServerChoice choice_;
  const std::string_view fence_key_;
  bool begun_ = false;
  std::optional<Problem> problem_;
  std::unique_ptr<UpstreamTransport> stream_;
  boost::beast::flat_buffer read_buffer_;
  std::optional<MessageParser<false, http::buffer_body>> parser_;
  bool reused_ = false;
  bool retried_ = false;
  bool request_sent_ = false;  // the whole request went out: only then may the stream be reused
  bool connect_failed_ = false;
  bool tls_failed_ = false;
};

}  // namespace fencegate::adapters::s3
