#include "gateway/admin_server.h"
#include "gateway/listen_socket.h"

#include <chrono>
#include <optional>

#include <boost/asio/post.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

namespace fencegate::gateway {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;

namespace {

constexpr auto kAdminTimeout = std::chrono::seconds(30);
constexpr std::uint32_t kAdminHeaderLimit = 16 * 1024;
constexpr std::uint64_t kAdminBodyLimit = 64 * 1024;

// One operator connection: read a request, answer it, repeat while keep-alive.
class AdminSession : public std::enable_shared_from_this<AdminSession> {
 public:
  AdminSession(tcp::socket socket, AdminApi& api) : stream_(std::move(socket)), api_(api) {}

  void Read() {
    parser_.emplace();
    parser_->header_limit(kAdminHeaderLimit);
    parser_->body_limit(kAdminBodyLimit);
    stream_.expires_after(kAdminTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](error_code ec, std::size_t) { self->OnRead(ec); });
  }

 private:
  void OnRead(error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == net::error::operation_aborted) {
      Close();
      return;
    }
    response_ = {};
    if (ec) {
      response_.result(http::status::bad_request);
      response_.keep_alive(false);
    } else {
      api_.Handle(parser_->get(), &response_);
    }
    const bool head = !ec && parser_->get().method() == http::verb::head;
    response_.prepare_payload();
    if (head) response_.body().clear();
    stream_.expires_after(kAdminTimeout);
    http::async_write(stream_, response_,
                      [self = shared_from_this()](error_code write_ec, std::size_t) {
                        if (write_ec || !self->response_.keep_alive()) {
                          self->Close();
                          return;
                        }
                        self->Read();
                      });
  }

  void Close() {
    error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  AdminApi::Response response_;
  AdminApi& api_;
};

}  // namespace

AdminServer::AdminServer(GatewayContext& context) : api_(context), acceptor_(ioc_) {}

AdminServer::~AdminServer() {
  Stop();
  if (thread_.joinable()) thread_.join();
}

bool AdminServer::Listen(const tcp::endpoint& endpoint, std::string* error) {
  return OpenListenSocket(acceptor_, endpoint, /*reuse_port=*/false, "admin", error);
}

tcp::endpoint AdminServer::local_endpoint() const {
  error_code ec;
  return acceptor_.local_endpoint(ec);
}

void AdminServer::Start() {
  Accept();
  thread_ = std::thread([this] { ioc_.run(); });
}

void AdminServer::Stop() { ioc_.stop(); }

void AdminServer::Accept() {
  acceptor_.async_accept([this](error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted) return;
    if (!ec) std::make_shared<AdminSession>(std::move(socket), api_)->Read();
    Accept();
  });
}

}  // namespace fencegate::gateway
