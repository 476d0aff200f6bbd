#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/config/config.h"

namespace fencegate::gateway {

// Picks the route of a request: the longest matching path prefix wins; among routes with the
// same prefix, one whose host equals the request's host beats a host-less one. Hosts compare
// case-insensitively and without port. Immutable after construction, so threads share it.
class Router {
 public:
  explicit Router(const std::vector<RouteConfig>& routes);

  // Index into the `routes` given to the constructor, or nullopt when no route matches.
  // `host` is the Host field value as sent (a port is ignored).
  std::optional<std::size_t> Match(std::string_view host, std::string_view path) const;

 private:
  struct Entry {
    std::string prefix;
    std::string host;  // lower-case, empty = any host
    std::size_t index = 0;
  };
  // Sorted so that the first match is the best: longer prefix first, then host-bound first.
  std::vector<Entry> entries_;
};

// The Host field value without the port, e.g. "Example.com:8080" -> "Example.com",
// "[::1]:80" -> "[::1]". Case is kept; compare with beast::iequals.
std::string_view HostWithoutPort(std::string_view host);

}  // namespace fencegate::gateway
