#pragma once

#include <cstdint>

namespace fencegate::integration {

// How many TCP connections on this host are established with `port` at either end, as the
// kernel reports them (/proc/net/tcp and tcp6). Both ends of a loopback connection count: once
// a server closed a connection, neither end is ESTABLISHED any more, whether or not the client
// noticed yet.
int EstablishedTcpConnections(std::uint16_t port);

}  // namespace fencegate::integration
