#include "tests/support/free_port.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace fencegate::integration {

std::uint16_t FreeLoopbackPort() {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor acceptor(
      ioc, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  return acceptor.local_endpoint().port();
}

bool LoopbackPortAccepts(std::uint16_t port) {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket socket(ioc);
  boost::system::error_code ec;
  socket.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port),
                 ec);
  return !ec;
}

}  // namespace fencegate::integration
