#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>

#include "resource_adapters/s3/sigv4.h"

namespace fencegate::adapters::s3 {

namespace http = boost::beast::http;

// Where and how requests to the backend go; shared by every call of one backend.
struct Endpoint {
  std::vector<boost::asio::ip::tcp::endpoint> addresses;
  std::string host_header;  // "HOST:PORT", signed
  std::string region;
  Credentials credentials;
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds response_timeout{60000};
};

// Produces the next piece of a streamed request body into `buffer`: `bytes` of it, `done` with
// the last piece (possibly empty).
using BodySource = std::function<boost::asio::awaitable<boost::system::error_code>(
    boost::asio::mutable_buffer buffer, std::size_t* bytes, bool* done)>;

// One request to the backend on a connection of its own: signed with SigV4 (UNSIGNED-PAYLOAD),
// sent with a body held in memory or streamed from a source, and its response read piece by
// piece. Errors are returned, never thrown.
class UpstreamCall {
 public:
  UpstreamCall(boost::asio::io_context& ioc, const Endpoint& endpoint);

  // Connects, signs `header` (Host, X-Amz-Date, X-Amz-Content-Sha256, Authorization are set
  // here), writes it with `body` and reads the response header.
  boost::asio::awaitable<boost::system::error_code> Send(http::request_header<> header,
                                                         std::string_view body);

  // Like Send, but the body (of the Content-Length `header` announces) comes piece by piece
  // from `source` through one buffer of `piece_size` bytes, so it is never held whole.
  boost::asio::awaitable<boost::system::error_code> SendStreamed(http::request_header<> header,
                                                                 const BodySource& source,
                                                                 std::size_t piece_size);

  // The response; its header is valid after Send succeeded.
  const http::response_header<>& response() const { return parser_->get().base(); }

  // Reads the next piece of the response body into `buffer`; `done` once it is complete.
  boost::asio::awaitable<boost::system::error_code> ReadBody(boost::asio::mutable_buffer buffer,
                                                             std::size_t* bytes, bool* done);

  // Reads the rest of the body into `out`, keeping at most `limit` bytes of it.
  boost::asio::awaitable<boost::system::error_code> ReadWholeBody(std::string* out,
                                                                  std::size_t limit);

  // True when the connect failed (502), as opposed to a failure mid-exchange.
  bool connect_failed() const { return connect_failed_; }

 private:
  // Connects and signs `header` (Host, X-Amz-Date, X-Amz-Content-Sha256, Authorization).
  boost::asio::awaitable<boost::system::error_code> Connect(http::request_header<>& header);
  boost::asio::awaitable<boost::system::error_code> ReadResponseHeader(http::verb method);

  const Endpoint& endpoint_;
  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer read_buffer_;
  std::optional<http::response_parser<http::buffer_body>> parser_;
  bool connect_failed_ = false;
};

}  // namespace fencegate::adapters::s3
