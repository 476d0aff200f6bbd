#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "resource_adapters/webdav/webdav_adapter.h"

namespace fencegate::adapters::webdav {

namespace http = boost::beast::http;

// What every exchange of one backend shares; immutable after the factory built it.
struct WebdavBackend {
  WebdavAdapterOptions options;
  // Resolved once by the factory; empty if that failed, and then each connect resolves again.
  std::vector<boost::asio::ip::tcp::endpoint> endpoints;
};

// One keep-alive connection for the adapter's own small requests (LOCK, PROPFIND, PROPPATCH,
// UNLOCK) of one fenced write, sent one after another; bodies are small, so they are held whole.
// Reconnects when the server closed the connection between requests.
class DavConnection : public std::enable_shared_from_this<DavConnection> {
 public:
  using Request = http::request<http::string_body>;
  using Response = http::response<http::string_body>;
  using Handler = std::function<void(boost::system::error_code, Response)>;

  DavConnection(boost::asio::io_context& ioc, std::shared_ptr<const WebdavBackend> backend);
  ~DavConnection();

  // A request for `target` with Host and (when `body` is not empty) an XML body.
  Request MakeRequest(http::verb method, const std::string& target, std::string body) const;

  // Sends `request` and reads the response; errors are connect, timeout or protocol errors.
  void Send(Request request, Handler handler);

  void Close();

 private:
  void Connect();
  void Write();
  void Fail(boost::system::error_code ec);

  boost::asio::io_context& ioc_;
  std::shared_ptr<const WebdavBackend> backend_;
  std::optional<boost::beast::tcp_stream> stream_;
  std::optional<boost::asio::ip::tcp::resolver> resolver_;
  boost::beast::flat_buffer buffer_;
  Request request_;
  Response response_;
  Handler handler_;
};

}  // namespace fencegate::adapters::webdav
