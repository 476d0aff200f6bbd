#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>

namespace fencegate::tls_client {

// What a TLS client (the gateway towards a backend or an etcd member) trusts and presents.
struct ClientTlsOptions {
  std::string ca_file;           // empty: the system trust store
  std::string server_name;       // SNI and the name verified; empty: the connection's host
  bool verify_hostname = true;   // off only when configured so (the caller logs a warning)
  std::string client_cert_file;  // mTLS; empty: no client certificate
  std::string client_key_file;
};

// The client context: the CA file (or the system trust store), peer verification always on,
// the optional client certificate, TLS 1.2+, ALPN http/1.1. Null with `error` naming the file.
std::shared_ptr<boost::asio::ssl::context> BuildClientContext(const ClientTlsOptions& options,
                                                              std::string* error);

// Per connection, before the handshake: SNI (for a host name) and the name or IP address the
// peer's certificate must carry (server_name, else `host`), unless verify_hostname is off.
void PrepareClientHandshake(const ClientTlsOptions& options, const std::string& host, SSL* ssl);

}  // namespace fencegate::tls_client
