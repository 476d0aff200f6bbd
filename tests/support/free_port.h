#pragma once

#include <cstdint>

namespace fencegate::integration {

// A loopback port nothing listens on now (bound to port 0, then closed): for a server the test
// starts there, or for connections it expects refused.
std::uint16_t FreeLoopbackPort();

// Whether something accepts TCP connections on the loopback `port` now.
bool LoopbackPortAccepts(std::uint16_t port);

}  // namespace fencegate::integration
