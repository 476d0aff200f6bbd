#pragma once

#include <chrono>
#include <string>

namespace fencegate::gateway::tls {

// Whether a listener asks TLS clients for a certificate (README "Transport (TLS)").
enum class ClientAuth {
  kOff,       // no certificate requested
  kOptional,  // requested; a client without one is let in, a presented one must verify
  kRequired,  // a client without a verifying certificate fails the handshake
};

// TLS termination on one listener (config `tls.traffic` / `tls.admin`).
struct ServerTlsSettings {
  bool enabled = false;
  std::string cert_file;       // PEM: leaf certificate first, then intermediates
  std::string key_file;        // PEM private key of the leaf
  std::string client_ca_file;  // PEM CA bundle that client certificates must chain to
  ClientAuth client_auth = ClientAuth::kOff;
  bool tls13_only = false;  // min_version "1.3"; otherwise TLS 1.2 and 1.3
  // OpenSSL cipher list for TLS 1.2 (TLS 1.3 suites are OpenSSL's defaults, all AEAD).
  // Mozilla's "intermediate" list: forward secrecy and AEAD only.
  std::string ciphers =
      "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
      "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
      "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
  std::chrono::milliseconds handshake_timeout{10000};
  std::chrono::milliseconds shutdown_timeout{2000};  // waiting for the client's close_notify
};

struct TlsConfig {
  ServerTlsSettings traffic;
  ServerTlsSettings admin;
};

}  // namespace fencegate::gateway::tls
