#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

namespace fencegate::adapters::testing {

// A backend for HTTP adapter tests: listens on 127.0.0.1 (ephemeral port) on its own thread,
// records every request and answers as the test's handler says.
class FixtureHttpServer {
 public:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;
  using Response = boost::beast::http::response<boost::beast::http::string_body>;

  struct Received {
    Request request;
    int connection = 0;           // 1-based, in accept order
    int index_on_connection = 0;  // 1-based
  };

  enum class Action {
    kRespond,             // write `response`, keep the connection if it allows
    kCloseWithoutAnswer,  // close right after reading the request
    kNeverAnswer,         // keep the connection open and silent
    kRawThenClose,        // write `raw` as it is (pieces `pause` apart), then close
  };

  struct Reply {
    Action action = Action::kRespond;
    Response response;
    std::vector<std::string> raw;  // for kRawThenClose
  };

  // Runs on the server thread.
  using Handler = std::function<Reply(const Received&)>;

  explicit FixtureHttpServer(Handler handler);
  ~FixtureHttpServer();

  std::uint16_t port() const { return port_; }
  int accepted_connections() const;
  // Connections the server closed itself (Connection: close, kCloseWithoutAnswer,
  // kRawThenClose); the close has been sent once counted.
  int closed_connections() const;
  std::vector<Received> received() const;

  // A 200 response with `body` and Content-Length.
  static Reply Ok(std::string body);

 private:
  boost::asio::awaitable<void> AcceptLoop();
  boost::asio::awaitable<void> Serve(boost::asio::ip::tcp::socket socket, int connection);
  void Close(boost::asio::ip::tcp::socket& socket);

  Handler handler_;
  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
  mutable std::mutex mutex_;
  int accepted_ = 0;
  int closed_ = 0;
  std::vector<Received> received_;
  std::thread thread_;
};

}  // namespace fencegate::adapters::testing
