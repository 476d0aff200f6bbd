#include "gateway/server/listen_socket.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fencegate::gateway {
namespace net = boost::asio;

bool OpenListenSocket(net::ip::tcp::acceptor& acceptor, const net::ip::tcp::endpoint& endpoint,
                      std::string_view what, std::string* error) {
  boost::system::error_code ec;
  const char* step = "open a socket for";
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) {
    step = "set socket options for";
    acceptor.set_option(net::socket_base::reuse_address(true), ec);
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

bool ShareListenSocket(net::ip::tcp::acceptor& listener, net::ip::tcp::acceptor& acceptor,
                       std::string* error) {
  boost::system::error_code ec;
  const net::ip::tcp::endpoint local = listener.local_endpoint(ec);
  const int fd = ec ? -1 : ::fcntl(listener.native_handle(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    *error = "cannot duplicate the listening socket: " +
             (ec ? ec.message() : std::string(std::strerror(errno)));
    return false;
  }
  acceptor.assign(local.protocol(), fd, ec);
  if (ec) {
    ::close(fd);
    *error = "cannot share the listening socket: " + ec.message();
    return false;
  }
  return true;
}

}  // namespace fencegate::gateway
