#pragma once

#include <string>
#include <string_view>

#include <boost/asio/ip/tcp.hpp>

#include "lockstore/status.h"

namespace fencegate::gateway {

// Opens `acceptor` on `endpoint`, binds and listens. SO_REUSEADDR only (a restart binds while
// old connections sit in TIME_WAIT); never SO_REUSEPORT, which would let any other process of
// the same user bind the same address and take a share of its connections. So a second process
// on an address in use (or overlapping it: 0.0.0.0:P and 127.0.0.1:P) fails with EADDRINUSE.
// On failure an IOError naming `what`, the address and the cause.
lockstore::Status OpenListenSocket(boost::asio::ip::tcp::acceptor& acceptor,
                                   const boost::asio::ip::tcp::endpoint& endpoint,
                                   std::string_view what);

// Gives `acceptor` (of another io_context) its own descriptor, a dup(2), of the listening
// socket `listener`: several threads accept from one socket, each through its own reactor and
// without a hand-over. An assigned acceptor deregisters from its reactor on close, which matters
// because epoll forgets a descriptor only when its last duplicate is closed.
lockstore::Status ShareListenSocket(boost::asio::ip::tcp::acceptor& listener,
                                    boost::asio::ip::tcp::acceptor& acceptor);

}  // namespace fencegate::gateway
