#include "tests/s3/counting_relay.h"

#include <array>
#include <future>

#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

namespace fencegate::integration {

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

// Both legs of one relayed connection; the pumps hold it alive until both directions end.
struct Link : std::enable_shared_from_this<Link> {
  explicit Link(asio::io_context& ioc) : client(ioc), backend(ioc) {}
  tcp::socket client;
  tcp::socket backend;
  std::array<char, 16384> upstream_buffer{};
  std::array<char, 16384> downstream_buffer{};
};

// Copies `from` to `to` until `from` ends, then half-closes `to` (or closes both on an error).
void Pump(std::shared_ptr<Link> link, tcp::socket& from, tcp::socket& to,
          std::array<char, 16384>& buffer) {
  from.async_read_some(asio::buffer(buffer), [link, &from, &to, &buffer](
                                                 boost::system::error_code ec, std::size_t n) {
    boost::system::error_code ignored;
    if (ec) {
      if (ec == asio::error::eof) {
        to.shutdown(tcp::socket::shutdown_send, ignored);
      } else {
        to.close(ignored);
        from.close(ignored);
      }
      return;
    }
    asio::async_write(to, asio::buffer(buffer.data(), n),
                      [link, &from, &to, &buffer](boost::system::error_code ec, std::size_t) {
                        if (ec) {
                          boost::system::error_code ignored;
                          from.close(ignored);
                          to.close(ignored);
                          return;
                        }
                        Pump(link, from, to, buffer);
                      });
  });
}

}  // namespace

CountingRelay::CountingRelay(std::uint16_t backend_port)
    : backend_port_(backend_port),
      acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
  port_ = acceptor_.local_endpoint().port();
  Accept();
  thread_ = std::thread([this] { ioc_.run(); });
}

CountingRelay::~CountingRelay() {
  ioc_.stop();
  thread_.join();
}

void CountingRelay::CloseAll() {
  std::promise<void> closed;
  asio::post(ioc_, [this, &closed] {
    for (auto& weak : links_) {
      if (auto link = std::static_pointer_cast<Link>(weak.lock())) {
        boost::system::error_code ignored;
        link->client.close(ignored);
        link->backend.close(ignored);
      }
    }
    links_.clear();
    closed.set_value();
  });
  closed.get_future().wait();
}

void CountingRelay::Accept() {
  auto link = std::make_shared<Link>(ioc_);
  acceptor_.async_accept(link->client, [this, link](boost::system::error_code ec) {
    if (ec) return;
    ++connections_;
    links_.push_back(link);
    link->backend.async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), backend_port_),
                                [link](boost::system::error_code ec) {
                                  if (ec) {
                                    boost::system::error_code ignored;
                                    link->client.close(ignored);
                                    return;
                                  }
                                  Pump(link, link->client, link->backend, link->upstream_buffer);
                                  Pump(link, link->backend, link->client, link->downstream_buffer);
                                });
    Accept();
  });
}

}  // namespace fencegate::integration
