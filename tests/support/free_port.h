#pragma once

#include <cstdint>

namespace fencegate::integration {

// A loopback port nothing listens on now (bound to port 0, then closed): for a server the test
// starts there, or for connections it expects refused.
std::uint16_t FreeLoopbackPort();

}  // namespace fencegate::integration
