#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace fencegate::integration {

// A TCP relay on loopback in front of one backend port that counts the connections made through
// it: how the tests see how many backend connections the gateway opened. Bytes are passed on
// unchanged in both directions; one thread runs it.
class CountingRelay {
 public:
  explicit CountingRelay(std::uint16_t backend_port);
  ~CountingRelay();
  CountingRelay(const CountingRelay&) = delete;
  CountingRelay& operator=(const CountingRelay&) = delete;

  std::uint16_t port() const { return port_; }
  int connections() const { return connections_.load(); }
  // Closes every relayed connection, as a backend does when it drops idle keep-alive ones.
  void CloseAll();

 private:
  void Accept();

  std::uint16_t backend_port_;
  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
  std::atomic<int> connections_{0};
  std::vector<std::weak_ptr<void>> links_;  // touched on the relay's thread only
  std::thread thread_;
};

}  // namespace fencegate::integration
