#include "gateway/http/router.h"

#include <algorithm>
#include <cctype>

#include <boost/beast/core/string.hpp>

namespace fencegate::gateway {

std::string_view HostWithoutPort(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    const auto close = host.find(']');
    return close == std::string_view::npos ? host : host.substr(0, close + 1);
  }
  const auto colon = host.rfind(':');
  return colon == std::string_view::npos ? host : host.substr(0, colon);
}

Router::Router(const std::vector<RouteConfig>& routes) {
  entries_.reserve(routes.size());
  for (std::size_t i = 0; i < routes.size(); ++i) {
    Entry entry{routes[i].prefix, std::string(HostWithoutPort(routes[i].host)), i};
    std::transform(entry.host.begin(), entry.host.end(), entry.host.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    entries_.push_back(std::move(entry));
  }
  // Stable: among equal candidates the configuration order decides.
  std::stable_sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
    if (a.prefix.size() != b.prefix.size()) return a.prefix.size() > b.prefix.size();
    return !a.host.empty() && b.host.empty();
  });
}

std::optional<std::size_t> Router::Match(std::string_view host, std::string_view path) const {
  const std::string_view bare_host = HostWithoutPort(host);
  for (const Entry& entry : entries_) {
    if (!path.starts_with(entry.prefix)) continue;
    if (!entry.host.empty() && !boost::beast::iequals(entry.host, bare_host)) continue;
    return entry.index;
  }
  return std::nullopt;
}

}  // namespace fencegate::gateway
