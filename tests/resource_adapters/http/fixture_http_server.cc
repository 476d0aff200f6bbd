#include "tests/resource_adapters/http/fixture_http_server.h"

#include <chrono>
#include <exception>
#include <utility>

#include <boost/asio/buffer.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

namespace fencegate::adapters::testing {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::ip::tcp;

FixtureHttpServer::FixtureHttpServer(Handler handler)
    : handler_(std::move(handler)),
      acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
  port_ = acceptor_.local_endpoint().port();
  asio::co_spawn(ioc_, AcceptLoop(), [](std::exception_ptr) {});
  thread_ = std::thread([this] { ioc_.run(); });
}

FixtureHttpServer::~FixtureHttpServer() {
  ioc_.stop();
  thread_.join();
}

int FixtureHttpServer::accepted_connections() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return accepted_;
}

int FixtureHttpServer::closed_connections() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_;
}

void FixtureHttpServer::Close(tcp::socket& socket) {
  socket.close();
  std::lock_guard<std::mutex> lock(mutex_);
  ++closed_;
}

std::vector<FixtureHttpServer::Received> FixtureHttpServer::received() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return received_;
}

FixtureHttpServer::Reply FixtureHttpServer::Ok(std::string body) {
  Reply reply;
  reply.response.result(http::status::ok);
  reply.response.version(11);
  reply.response.body() = std::move(body);
  reply.response.prepare_payload();
  return reply;
}

asio::awaitable<void> FixtureHttpServer::AcceptLoop() {
  for (;;) {
    tcp::socket socket = co_await acceptor_.async_accept(asio::use_awaitable);
    int connection;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      connection = ++accepted_;
    }
    asio::co_spawn(ioc_, Serve(std::move(socket), connection), [](std::exception_ptr) {});
  }
}

asio::awaitable<void> FixtureHttpServer::Serve(tcp::socket socket, int connection) {
  boost::beast::flat_buffer buffer;
  for (int index = 1;; ++index) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(boost::none);
    co_await http::async_read(socket, buffer, parser, asio::use_awaitable);
    Received received{parser.release(), connection, index};
    Reply reply = handler_(received);
    const bool keep_alive = received.request.keep_alive();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      received_.push_back(std::move(received));
    }
    switch (reply.action) {
      case Action::kCloseWithoutAnswer:
        Close(socket);
        co_return;
      case Action::kNeverAnswer: {
        asio::steady_timer forever(socket.get_executor(), std::chrono::hours(1));
        co_await forever.async_wait(asio::use_awaitable);
        co_return;
      }
      case Action::kRawThenClose:
        // Each piece its own write, a moment apart, so the adapter reads them separately.
        for (const std::string& piece : reply.raw) {
          co_await asio::async_write(socket, asio::buffer(piece), asio::use_awaitable);
          asio::steady_timer gap(socket.get_executor(), std::chrono::milliseconds(20));
          co_await gap.async_wait(asio::use_awaitable);
        }
        Close(socket);
        co_return;
      case Action::kRespond:
        break;
    }
    reply.response.keep_alive(keep_alive && reply.response.keep_alive());
    co_await http::async_write(socket, reply.response, asio::use_awaitable);
    if (!reply.response.keep_alive()) {
      Close(socket);
      co_return;
    }
  }
}

}  // namespace fencegate::adapters::testing
