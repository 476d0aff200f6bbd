#include "resource_adapters/transport/resolve_once.h"

#include <boost/asio/io_context.hpp>

namespace fencegate::adapters {

std::vector<boost::asio::ip::tcp::endpoint> ResolveOnce(const std::string& host,
                                                        std::uint16_t port) {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::resolver resolver(ioc);
  boost::system::error_code ec;
  auto results = resolver.resolve(host, std::to_string(port), ec);
  std::vector<boost::asio::ip::tcp::endpoint> endpoints;
  if (!ec) {
    for (const auto& entry : results) endpoints.push_back(entry.endpoint());
  }
  return endpoints;
}

}  // namespace fencegate::adapters
