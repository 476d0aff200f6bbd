#pragma once

#include <string>
#include <string_view>

namespace fencegate::gateway {

// The one spelling of a Host field value that routing and the {host} placeholder of fence keys
// use, so that "Example.COM", "example.com:8080" and "example.com." are one host and one key:
// lower-case, without the port (every port of a name is the same host to the fence store), and
// without the trailing dot of a fully qualified name. An IPv6 literal keeps its brackets.
// Writes it to `out` (overwritten, so a reused string does not allocate) and returns true; returns
// false for a value that is no RFC 3986 host[:port] (a '%', '/', '@', a space, an empty label
// such as "a..b" or "..", a port that is not 1-5 digits, an unclosed '['). An empty value is
// valid (RFC 9112 3.2) and gives an empty host.
bool CanonicaliseHost(std::string_view value, std::string* out);

}  // namespace fencegate::gateway
