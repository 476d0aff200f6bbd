#pragma once

#include <cstddef>
#include <string_view>

#include <openssl/ssl.h>

#include <boost/system/error_code.hpp>

#include "gateway/tls/peer_identity.h"

namespace fencegate::gateway::tls {

// How a TLS handshake on a listener ended; the `result` label of
// fencegate_tls_handshakes_total.
enum class HandshakeResult {
  kOk,
  kPlainHttp,           // an HTTP request arrived on the TLS port
  kNoClientCert,        // client_auth required and none was sent
  kUnknownCa,           // the client certificate does not chain to the client CA
  kExpiredCert,         // the client certificate is expired or not yet valid
  kBadCert,             // any other client certificate failure (signature, purpose, ...)
  kClientRejectedCert,  // the client refused our certificate (alert from the client)
  kProtocol,            // no common version or cipher, malformed records
  kTimeout,             // not finished within handshake_timeout
  kClosed,              // the client went away mid-handshake
};
inline constexpr std::size_t kHandshakeResultCount = 10;
std::string_view HandshakeResultName(HandshakeResult result);

// The first byte of every TLS connection: a handshake record (ClientHello).
inline constexpr unsigned char kTlsHandshakeRecord = 0x16;

// Why the handshake on `ssl` failed with `ec` (a timeout from the stream, an OpenSSL error, or
// the connection ending).
HandshakeResult ClassifyHandshakeFailure(const boost::system::error_code& ec, SSL* ssl);

// The client's certificate identity after a successful handshake (empty when none was sent).
PeerIdentity ReadPeerIdentity(SSL* ssl);

}  // namespace fencegate::gateway::tls
