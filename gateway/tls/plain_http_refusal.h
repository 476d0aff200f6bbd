#pragma once

#include <string>

namespace fencegate::gateway::tls {

// The whole answer to plain HTTP sent to a TLS listener (traffic or admin), in plain HTTP: a
// 400 problem document `plain-http-on-tls-port` with Connection: close.
std::string PlainHttpOnTlsResponse();

}  // namespace fencegate::gateway::tls
