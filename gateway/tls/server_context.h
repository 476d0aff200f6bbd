#pragma once

#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "gateway/tls/tls_settings.h"

namespace fencegate::gateway::tls {

// Builds the OpenSSL context of a TLS listener from `settings`: certificate chain and key read
// from their files now (so a reload picks up replaced files), TLS 1.2+ with forward-secret
// AEAD ciphers, ALPN http/1.1, and client certificate verification as configured. Returns null
// with `error` naming the file and OpenSSL's reason when something does not load.
std::shared_ptr<boost::asio::ssl::context> BuildServerContext(const ServerTlsSettings& settings,
                                                              std::string* error);

}  // namespace fencegate::gateway::tls
