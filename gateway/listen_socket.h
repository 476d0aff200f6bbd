#pragma once

#include <string>
#include <string_view>

#include <boost/asio/ip/tcp.hpp>

namespace fencegate::gateway {

// Opens `acceptor` on `endpoint`, binds and listens. With `reuse_port`, several acceptors (one
// per network thread) share the port and the kernel balances connections between them. On
// failure returns false with a message naming `what`, the address and the cause.
bool OpenListenSocket(boost::asio::ip::tcp::acceptor& acceptor,
                      const boost::asio::ip::tcp::endpoint& endpoint, bool reuse_port,
                      std::string_view what, std::string* error);

}  // namespace fencegate::gateway
