#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "base/tls_client/client_tls_options.h"

namespace fencegate::tls_client {

// The client context: the CA file (or the system trust store), peer verification always on,
// the optional client certificate, TLS 1.2+, ALPN http/1.1. Null with `error` naming the file.
std::shared_ptr<boost::asio::ssl::context> BuildClientContext(const ClientTlsOptions& options,
                                                              std::string* error);

// Per connection, before the handshake: SNI (for a host name) and the name or IP address the
// peer's certificate must carry (server_name, else `host`), unless verify_hostname is off.
void PrepareClientHandshake(const ClientTlsOptions& options, const std::string& host, SSL* ssl);

}  // namespace fencegate::tls_client
