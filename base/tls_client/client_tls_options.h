#pragma once

#include <string>

namespace fencegate::tls_client {

// What a TLS client (the gateway towards a backend or an etcd member) trusts and presents.
// Plain values, apart from client_tls.h, so that option and config headers need no Asio or
// OpenSSL.
struct ClientTlsOptions {
  std::string ca_file;           // empty: the system trust store
  std::string server_name;       // SNI and the name verified; empty: the connection's host
  bool verify_hostname = true;   // off only when configured so (the caller logs a warning)
  std::string client_cert_file;  // mTLS; empty: no client certificate
  std::string client_key_file;
};

}  // namespace fencegate::tls_client
