#include "gateway/listen_socket.h"

#include <sys/socket.h>

namespace fencegate::gateway {
namespace net = boost::asio;

bool OpenListenSocket(net::ip::tcp::acceptor& acceptor, const net::ip::tcp::endpoint& endpoint,
                      bool reuse_port, std::string_view what, std::string* error) {
  using ReusePort = net::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;
  boost::system::error_code ec;
  const char* step = "open a socket for";
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) {
    step = "set socket options for";
    acceptor.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec && reuse_port) acceptor.set_option(ReusePort(true), ec);
  }
  if (!ec) {
    step = "bind";
    acceptor.bind(endpoint, ec);
  }
  if (!ec) {
    step = "listen on";
    acceptor.listen(net::socket_base::max_listen_connections, ec);
  }
  if (!ec) return true;
  const std::string host = endpoint.address().to_string();
  *error = "cannot " + std::string(step) + " the " + std::string(what) + " address " +
           (endpoint.address().is_v6() ? "[" + host + "]" : host) + ":" +
           std::to_string(endpoint.port()) + ": " + ec.message();
  boost::system::error_code ignored;
  acceptor.close(ignored);
  return false;
}

}  // namespace fencegate::gateway
