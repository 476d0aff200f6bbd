#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "tests/support/http_client.h"

namespace fencegate::integration {

// What a TLS test client trusts and presents.
struct TlsClientOptions {
  std::string ca_file;    // CA the server certificate must chain to
  std::string cert_file;  // client certificate (mTLS); empty: none
  std::string key_file;
  std::string server_name = "localhost";  // SNI and the name verified in the certificate
};

// A synchronous HTTPS/1.1 client on one connection to 127.0.0.1 (OpenSSL through Beast), every
// step under a deadline like HttpConnection. The server certificate is always verified.
class TlsConnection {
 public:
  explicit TlsConnection(const TlsClientOptions& options,
                         std::chrono::milliseconds timeout = std::chrono::seconds(10));

  // TCP connect and TLS handshake. False (and error()) on failure.
  bool Connect(std::uint16_t port);
  std::optional<Response> RoundTrip(Request request);

  // After Connect: the server certificate's subject CN, and the ALPN protocol agreed on.
  std::string ServerCommonName();
  std::string AlpnProtocol();

  const std::string& error() const { return error_; }

 private:
  template <typename Start>
  boost::system::error_code Run(Start start);

  boost::asio::io_context io_context_;
  boost::asio::ssl::context context_;
  boost::beast::ssl_stream<boost::beast::tcp_stream> stream_;
  boost::beast::flat_buffer buffer_;
  std::string server_name_;
  std::chrono::milliseconds timeout_;
  std::string error_;
};

// One request on a fresh TLS connection; nullopt with `error` on failure.
std::optional<Response> TlsFetch(std::uint16_t port, const TlsClientOptions& options,
                                 Request request, std::string* error = nullptr);

}  // namespace fencegate::integration
