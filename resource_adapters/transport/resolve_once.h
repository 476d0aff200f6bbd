#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/asio/ip/tcp.hpp>

namespace fencegate::adapters {

// Resolves a backend's address once, when its factory is built. Backends are usually numeric
// addresses, which resolve without a lookup. A name that does not resolve now is not fatal: the
// result is empty, and connections resolve it again when they connect.
std::vector<boost::asio::ip::tcp::endpoint> ResolveOnce(const std::string& host,
                                                        std::uint16_t port);

}  // namespace fencegate::adapters
