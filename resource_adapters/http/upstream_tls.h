#pragma once

#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "resource_adapters/http/http_adapter.h"
#include "resource_adapters/http/upstream_transport.h"

namespace fencegate::adapters {

// The client context for an `https` backend: the CA file (or the system trust store), the
// optional client certificate for backend mTLS, TLS 1.2+. Null with `error` naming the file.
std::shared_ptr<boost::asio::ssl::context> BuildUpstreamTlsContext(
    const HttpAdapterOptions& options, std::string* error);

// Per connection, before the handshake: SNI (for a host name) and the name or IP address the
// backend's certificate must carry, unless options.tls_verify_hostname is off.
void PrepareUpstreamHandshake(const HttpAdapterOptions& options,
                              UpstreamTransport::TlsStream& stream);

}  // namespace fencegate::adapters
