#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "base/tls_client/client_tls_options.h"

namespace fencegate::gateway::lock_client {

// A parsed "http[s]://HOST[:PORT][/PATH]" of the lock API (PATH defaults to "/locks/").
struct LockApiUrl {
  bool tls = false;
  std::string host;
  std::uint16_t port = 80;         // 443 for https://
  std::string prefix = "/locks/";  // always ends with '/'
};
bool ParseLockApiUrl(const std::string& text, LockApiUrl* out, std::string* error);

// Everything a call needs besides its request: where, how TLS is checked, which API key.
struct LockApiConnection {
  LockApiUrl url;
  tls_client::ClientTlsOptions tls_options;
  std::shared_ptr<boost::asio::ssl::context> tls_context;  // null for http://
  std::string api_key;  // sent as Authorization: Bearer unless empty
};

// Builds the TLS context for an https:// URL with the gateway's own client code
// (base/tls_client); nothing for http://. False with `error` naming the unusable file.
bool PrepareConnection(LockApiConnection* connection, std::string* error);

struct HttpAnswer {
  unsigned status = 0;
  std::string body;
  std::string retry_after;  // the Retry-After field, if any
};

enum class Method { kGet, kPost };

// One request on a fresh connection, with a deadline for the whole exchange (Beast, driven by a
// private io_context). `json_body` is sent for kPost only. nullopt, with `error` set, if the
// exchange failed or timed out; a failed TLS handshake says which check refused the peer.
std::optional<HttpAnswer> Send(const LockApiConnection& connection, Method method,
                               const std::string& target, const std::string& json_body,
                               std::chrono::milliseconds timeout, std::string* error);

}  // namespace fencegate::gateway::lock_client
