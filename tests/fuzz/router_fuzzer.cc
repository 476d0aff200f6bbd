// Fuzzes gateway::Router and HostWithoutPort. Input lines: request Host value, request path,
// then up to 8 routes as "PREFIX" or "PREFIX HOST". Compares Match with a brute-force reference
// of the documented rule: the longest matching prefix wins; among equal prefixes a route bound to
// the request's host (case-insensitive, port ignored) beats a host-less one; then config order.

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/http/router.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using fencegate::gateway::HostWithoutPort;
using fencegate::gateway::RouteConfig;

constexpr std::size_t kMaxRoutes = 8;

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::optional<std::size_t> ReferenceMatch(const std::vector<RouteConfig>& routes,
                                          std::string_view host, std::string_view path) {
  const std::string request_host = Lower(HostWithoutPort(host));
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < routes.size(); ++i) {
    const RouteConfig& route = routes[i];
    const std::string route_host = Lower(HostWithoutPort(route.host));
    if (!path.starts_with(route.prefix)) continue;
    if (!route_host.empty() && route_host != request_host) continue;
    if (!best) {
      best = i;
      continue;
    }
    const RouteConfig& current = routes[*best];
    if (route.prefix.size() > current.prefix.size() ||
        (route.prefix.size() == current.prefix.size() && !route_host.empty() &&
         HostWithoutPort(current.host).empty())) {
      best = i;
    }
  }
  return best;
}

void CheckHostWithoutPort(std::string_view host) {
  const std::string_view bare = HostWithoutPort(host);
  FUZZ_CHECK(host.starts_with(bare));
  if (bare.size() == host.size()) return;
  // Only a ":port" suffix is dropped, after a bracketed IPv6 literal when there is one.
  FUZZ_CHECK(host[bare.size()] == ':' || (bare.starts_with('[') && bare.ends_with(']')));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto fields =
      fencegate::fuzz::SplitFields(fencegate::fuzz::AsText(data, size), 2 + kMaxRoutes);
  const std::string_view host = fields[0];
  const std::string_view path = fields[1];
  std::vector<RouteConfig> routes;
  for (std::size_t i = 2; i < fields.size(); ++i) {
    if (fields[i].empty()) continue;
    const std::size_t space = fields[i].find(' ');
    RouteConfig route;
    route.prefix = std::string(fields[i].substr(0, space));
    if (space != std::string_view::npos) route.host = std::string(fields[i].substr(space + 1));
    routes.push_back(std::move(route));
  }

  CheckHostWithoutPort(host);
  const fencegate::gateway::Router router(routes);
  const std::optional<std::size_t> match = router.Match(host, path);
  FUZZ_CHECK(match == ReferenceMatch(routes, host, path));
  if (match) FUZZ_CHECK(*match < routes.size() && path.starts_with(routes[*match].prefix));
  // Host names are case-insensitive.
  std::string upper_host(host);
  std::transform(upper_host.begin(), upper_host.end(), upper_host.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  FUZZ_CHECK(router.Match(upper_host, path) == match);
  return 0;
}
