#pragma once

#include "base/tls_client/plain_or_tls_stream.h"

namespace fencegate::adapters {

// One connection to an http or s3 backend: plain TCP, or TLS over it (an `https` url). Pooled
// whole (transport/upstream_connection_pool.h). Shared by the adapters, which never include
// each other.
using UpstreamTransport = tls_client::PlainOrTlsStream;

}  // namespace fencegate::adapters
