#pragma once

#include "resource_adapters/transport/upstream_connection.h"

namespace fencegate::adapters {

// One connection to an http, webdav or s3 backend server (plain or TLS, counted per server).
// Pooled whole (transport/upstream_connection_pool.h). Shared by the adapters, which never
// include each other.
using UpstreamTransport = UpstreamConnection;

}  // namespace fencegate::adapters
