#include "gateway/cli/lock_http_client.h"

#include <openssl/x509.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include "base/tls_client/client_tls.h"
#include "base/tls_client/plain_or_tls_stream.h"

namespace fencegate::gateway::lock_client {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

bool ParseLockApiUrl(const std::string& text, LockApiUrl* out, std::string* error) {
  LockApiUrl url;
  std::string rest;
  if (text.starts_with("http://")) {
    rest = text.substr(7);
  } else if (text.starts_with("https://")) {
    rest = text.substr(8);
    url.tls = true;
    url.port = 443;
  } else {
    *error = "the URL must start with http:// or https:// (got '" + text + "')";
    return false;
  }
  const auto slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  if (slash != std::string::npos && slash + 1 < rest.size()) url.prefix = rest.substr(slash);
  if (url.prefix.back() != '/') url.prefix += '/';
  const auto colon = authority.rfind(':');
  if (colon != std::string::npos && authority.find(']') == std::string::npos) {
    const std::string port = authority.substr(colon + 1);
    authority.resize(colon);
    unsigned long value = 0;
    try {
      std::size_t used = 0;
      value = std::stoul(port, &used);
      if (used != port.size() || value == 0 || value > 65535) throw std::out_of_range(port);
    } catch (const std::exception&) {
      *error = "bad port '" + port + "' in " + text;
      return false;
    }
    url.port = static_cast<std::uint16_t>(value);
  }
  if (authority.empty()) {
    *error = "no host in " + text;
    return false;
  }
  url.host = authority;
  *out = std::move(url);
  return true;
}

bool PrepareConnection(LockApiConnection* connection, std::string* error) {
  if (!connection->url.tls) return true;
  connection->tls_context = tls_client::BuildClientContext(connection->tls_options, error);
  return connection->tls_context != nullptr;
}

namespace {

// Why the handshake failed, in words: OpenSSL's verdict on the gateway's certificate when that
// was the cause (unknown CA, name mismatch, expired), else the transport's error.
std::string HandshakeFailure(const LockApiConnection& connection, SSL* ssl,
                             const boost::system::error_code& ec) {
  const std::string where = connection.url.host + ":" + std::to_string(connection.url.port);
  const long verdict = SSL_get_verify_result(ssl);
  if (verdict != X509_V_OK) {
    return "TLS handshake with " + where + " failed: the gateway's certificate was refused (" +
           X509_verify_cert_error_string(verdict) +
           "); --ca-file must name the CA that signed it, and its names must include the host or "
           "--server-name";
  }
  return "TLS handshake with " + where + " failed: " + ec.message();
}

}  // namespace

std::optional<HttpAnswer> Send(const LockApiConnection& connection, Method method,
                               const std::string& target, const std::string& json_body,
                               std::chrono::milliseconds timeout, std::string* error) {
  const LockApiUrl& url = connection.url;
  net::io_context ioc;
  tcp::resolver resolver(ioc);
  tls_client::PlainOrTlsStream stream(ioc, connection.tls_context);
  beast::flat_buffer buffer;
  http::request<http::string_body> request{
      method == Method::kGet ? http::verb::get : http::verb::post, target, 11};
  request.set(http::field::host, url.host);
  if (method == Method::kPost) {
    request.set(http::field::content_type, "application/json");
    request.body() = json_body;
  }
  if (!connection.api_key.empty()) {
    request.set(http::field::authorization, "Bearer " + connection.api_key);
  }
  request.prepare_payload();
  http::response<http::string_body> response;
  boost::system::error_code failure;
  std::string failure_text;

  auto exchange = [&] {
    http::async_write(stream, request, [&](boost::system::error_code ec, std::size_t) {
      if (ec) {
        failure = ec;
        return;
      }
      http::async_read(stream, buffer, response,
                       [&](boost::system::error_code ec, std::size_t) { failure = ec; });
    });
  };
  // resolve -> connect -> (handshake) -> write -> read, every step under the one deadline.
  stream.expires_after(timeout);
  resolver.async_resolve(
      url.host, std::to_string(url.port),
      [&](boost::system::error_code ec, tcp::resolver::results_type results) {
        if (ec) {
          failure = ec;
          return;
        }
        stream.lowest().async_connect(
            results, [&](boost::system::error_code ec, const tcp::endpoint&) {
              if (ec) {
                failure = ec;
                return;
              }
              if (!stream.is_tls()) {
                exchange();
                return;
              }
              tls_client::PrepareClientHandshake(connection.tls_options, url.host,
                                                 stream.tls().native_handle());
              stream.tls().async_handshake(
                  net::ssl::stream_base::client, [&](boost::system::error_code ec) {
                    if (ec) {
                      failure = ec;
                      failure_text = HandshakeFailure(connection, stream.tls().native_handle(), ec);
                      return;
                    }
                    exchange();
                  });
            });
      });
  ioc.run();
  if (failure) {
    *error = failure_text.empty() ? failure.message() : failure_text;
    // A listener with client_auth: required rejects a client without a certificate with an
    // alert after the handshake (TLS 1.3), so the hint goes with any later TLS error too.
    const bool tls_failure = failure.category() == net::error::get_ssl_category() ||
                             failure.category() == net::ssl::error::get_stream_category();
    if (stream.is_tls() && tls_failure && connection.tls_options.client_cert_file.empty()) {
      *error +=
          " (if the gateway requires a client certificate: --client-cert-file and "
          "--client-key-file)";
    }
    return std::nullopt;
  }
  HttpAnswer answer;
  answer.status = response.result_int();
  answer.body = std::move(response.body());
  answer.retry_after = std::string(response[http::field::retry_after]);
  return answer;
}

}  // namespace fencegate::gateway::lock_client
