#include "gateway/cli/lock_http_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

namespace fencegate::gateway::lock_client {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

bool ParseLockApiUrl(const std::string& text, LockApiUrl* out, std::string* error) {
  constexpr std::string_view kScheme = "http://";
  if (!text.starts_with(kScheme)) {
    *error = "the URL must start with http:// (got '" + text + "')";
    return false;
  }
  std::string rest = text.substr(kScheme.size());
  const auto slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  LockApiUrl url;
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

std::optional<HttpAnswer> Post(const LockApiUrl& url, const std::string& api_key,
                               const std::string& target, const std::string& json_body,
                               std::chrono::milliseconds timeout, std::string* error) {
  net::io_context ioc;
  tcp::resolver resolver(ioc);
  beast::tcp_stream stream(ioc);
  beast::flat_buffer buffer;
  http::request<http::string_body> request{http::verb::post, target, 11};
  request.set(http::field::host, url.host);
  request.set(http::field::content_type, "application/json");
  if (!api_key.empty()) request.set(http::field::authorization, "Bearer " + api_key);
  request.body() = json_body;
  request.prepare_payload();
  http::response<http::string_body> response;
  boost::system::error_code failure;

  // connect -> write -> read, each step under the one deadline.
  stream.expires_after(timeout);
  resolver.async_resolve(
      url.host, std::to_string(url.port),
      [&](boost::system::error_code ec, tcp::resolver::results_type results) {
        if (ec) {
          failure = ec;
          return;
        }
        stream.async_connect(results, [&](boost::system::error_code ec, const tcp::endpoint&) {
          if (ec) {
            failure = ec;
            return;
          }
          http::async_write(stream, request, [&](boost::system::error_code ec, std::size_t) {
            if (ec) {
              failure = ec;
              return;
            }
            http::async_read(stream, buffer, response,
                             [&](boost::system::error_code ec, std::size_t) { failure = ec; });
          });
        });
      });
  ioc.run();
  if (failure) {
    *error = failure.message();
    return std::nullopt;
  }
  HttpAnswer answer;
  answer.status = response.result_int();
  answer.body = std::move(response.body());
  answer.retry_after = std::string(response[http::field::retry_after]);
  return answer;
}

}  // namespace fencegate::gateway::lock_client
