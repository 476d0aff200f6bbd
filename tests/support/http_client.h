#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

namespace fencegate::integration {

namespace http = boost::beast::http;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

// A minimal synchronous HTTP/1.1 client on one connection to 127.0.0.1. Every operation runs
// under a deadline (async Beast operations driven by a private io_context), so a gateway that
// stops answering fails a test instead of hanging it.
class HttpConnection {
 public:
  explicit HttpConnection(std::chrono::milliseconds timeout = std::chrono::seconds(10));

  // Connects to 127.0.0.1:port. Returns false (and sets error()) on failure.
  bool Connect(std::uint16_t port);

  // Sends `request` (Content-Length is set from the body) and reads the response.
  std::optional<Response> RoundTrip(Request request);

  // Writes bytes exactly as given (for malformed requests and hand-framed streaming).
  bool WriteRaw(std::string_view bytes);

  // Reads one response.
  std::optional<Response> ReadResponse();

  // Reads until the peer closes the connection or the deadline passes; returns what arrived.
  std::string ReadUntilClose();

  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }
  const std::string& error() const { return error_; }

 private:
  // Runs the io_context until the operation started by `start` completes or times out.
  template <typename Start>
  boost::system::error_code Run(Start start);

  boost::asio::io_context io_context_;
  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  std::chrono::milliseconds timeout_;
  std::string error_;
};

// Builds a request with a Host header and the given extra fields.
Request MakeRequest(http::verb method, std::string target,
                    std::initializer_list<std::pair<std::string, std::string>> fields = {},
                    std::string body = {});

// One request on a fresh connection. On failure, the response is nullopt and `error` says why.
std::optional<Response> Fetch(std::uint16_t port, Request request, std::string* error = nullptr);

}  // namespace fencegate::integration
