#include "tests/support/http_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

namespace fencegate::integration {

namespace net = boost::asio;
namespace beast = boost::beast;
using boost::system::error_code;

HttpConnection::HttpConnection(std::chrono::milliseconds timeout)
    : stream_(io_context_), timeout_(timeout) {}

template <typename Start>
error_code HttpConnection::Run(Start start) {
  error_code result = net::error::would_block;
  stream_.expires_after(timeout_);
  start([&result](error_code ec, std::size_t) { result = ec; });
  io_context_.restart();
  io_context_.run();
  if (result) error_ = result.message();
  return result;
}

bool HttpConnection::Connect(std::uint16_t port) {
  net::ip::tcp::endpoint endpoint(net::ip::make_address("127.0.0.1"), port);
  error_code result = net::error::would_block;
  stream_.expires_after(timeout_);
  stream_.async_connect(endpoint, [&result](error_code ec) { result = ec; });
  io_context_.restart();
  io_context_.run();
  if (result) error_ = "connect: " + result.message();
  return !result;
}

std::optional<Response> HttpConnection::RoundTrip(Request request) {
  request.prepare_payload();
  error_code ec = Run([&](auto handler) { http::async_write(stream_, request, handler); });
  if (ec) return std::nullopt;
  return ReadResponse();
}

bool HttpConnection::WriteRaw(std::string_view bytes) {
  return !Run([&](auto handler) { net::async_write(stream_, net::buffer(bytes), handler); });
}

std::optional<Response> HttpConnection::ReadResponse() {
  http::response_parser<http::string_body> parser;
  parser.body_limit(boost::none);
  if (Run([&](auto handler) { http::async_read(stream_, buffer_, parser, handler); })) {
    return std::nullopt;
  }
  return parser.release();
}

std::string HttpConnection::ReadUntilClose() {
  std::string received(static_cast<const char*>(buffer_.data().data()), buffer_.size());
  buffer_.consume(buffer_.size());
  char chunk[4096];
  for (;;) {
    std::size_t got = 0;
    error_code ec = Run([&](auto handler) {
      stream_.async_read_some(net::buffer(chunk), [&got, handler](error_code e, std::size_t n) {
        got = n;
        handler(e, n);
      });
    });
    received.append(chunk, got);
    if (ec) break;
  }
  return received;
}

Request MakeRequest(http::verb method, std::string target,
                    std::initializer_list<std::pair<std::string, std::string>> fields,
                    std::string body) {
  Request request(method, target, 11);
  request.set(http::field::host, "127.0.0.1");
  for (const auto& [name, value] : fields) request.insert(name, value);
  request.body() = std::move(body);
  return request;
}

std::optional<Response> Fetch(std::uint16_t port, Request request, std::string* error) {
  HttpConnection connection;
  std::optional<Response> response;
  if (connection.Connect(port)) response = connection.RoundTrip(std::move(request));
  if (!response && error != nullptr) *error = connection.error();
  return response;
}

}  // namespace fencegate::integration
