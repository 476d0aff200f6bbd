#include "gateway/server/listen_socket.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fencegate::gateway {
namespace net = boost::asio;

lockstore::Status OpenListenSocket(net::ip::tcp::acceptor& acceptor,
                                   const net::ip::tcp::endpoint& endpoint, std::string_view what) {
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
  if (!ec) return lockstore::Status::Ok();
  const std::string host = endpoint.address().to_string();
  boost::system::error_code ignored;
  acceptor.close(ignored);
  return lockstore::Status::IOError("cannot " + std::string(step) + " the " + std::string(what) +
                                    " address " +
                                    (endpoint.address().is_v6() ? "[" + host + "]" : host) + ":" +
                                    std::to_string(endpoint.port()) + ": " + ec.message());
}

lockstore::Status ShareListenSocket(net::ip::tcp::acceptor& listener,
                                    net::ip::tcp::acceptor& acceptor) {
  boost::system::error_code ec;
  const net::ip::tcp::endpoint local = listener.local_endpoint(ec);
  const int fd = ec ? -1 : ::fcntl(listener.native_handle(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    return lockstore::Status::IOError("cannot duplicate the listening socket: " +
                                      (ec ? ec.message() : std::string(std::strerror(errno))));
  }
  acceptor.assign(local.protocol(), fd, ec);
  if (ec) {
    ::close(fd);
    return lockstore::Status::IOError("cannot share the listening socket: " + ec.message());
  }
  return lockstore::Status::Ok();
}

}  // namespace fencegate::gateway
