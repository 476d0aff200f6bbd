#pragma once

#include <string>
#include <vector>

namespace fencegate::gateway {

// Who the client proved to be with its TLS certificate (empty when the connection is plain or the
// client sent no certificate). Filled by the TLS handshake, read by authorization.
struct PeerIdentity {
  std::string subject;                // RFC 2253 form, e.g. "CN=writer-1,O=example"
  std::vector<std::string> dns_sans;  // subjectAltName DNS entries
  std::vector<std::string> uri_sans;  // subjectAltName URI entries (e.g. SPIFFE ids)
  bool verified = false;              // true only when the chain verified against the client CA
};

}  // namespace fencegate::gateway
