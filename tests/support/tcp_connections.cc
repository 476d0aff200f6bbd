#include "tests/support/tcp_connections.h"

#include <fstream>
#include <sstream>
#include <string>

namespace fencegate::integration {
namespace {

// The port of an address as /proc/net/tcp writes it: "0100007F:1F90".
std::uint16_t PortOf(const std::string& address) {
  const std::size_t colon = address.rfind(':');
  if (colon == std::string::npos) return 0;
  return static_cast<std::uint16_t>(std::stoul(address.substr(colon + 1), nullptr, 16));
}

int EstablishedIn(const char* table, std::uint16_t port) {
  constexpr const char* kEstablished = "01";
  std::ifstream in(table);
  std::string line;
  std::getline(in, line);  // the column names
  int count = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    if (!(fields >> slot >> local >> remote >> state)) continue;
    if (state == kEstablished && (PortOf(local) == port || PortOf(remote) == port)) ++count;
  }
  return count;
}

}  // namespace

int EstablishedTcpConnections(std::uint16_t port) {
  return EstablishedIn("/proc/net/tcp", port) + EstablishedIn("/proc/net/tcp6", port);
}

}  // namespace fencegate::integration
