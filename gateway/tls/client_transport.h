#pragma once

#include "base/tls_client/plain_or_tls_stream.h"

namespace fencegate::gateway::tls {

// A client connection's byte stream: plain, or TLS on a TLS listener. Timeouts are those of the
// TCP layer underneath (TLS reads and writes go through it).
using ClientTransport = tls_client::PlainOrTlsStream;

}  // namespace fencegate::gateway::tls
