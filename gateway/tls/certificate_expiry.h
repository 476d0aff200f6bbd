#pragma once

#include <optional>

#include <boost/asio/ssl/context.hpp>

namespace fencegate::gateway::tls {

// When the leaf certificate loaded into `context` stops being valid (its notAfter), in Unix
// seconds; nullopt when the context holds no certificate.
std::optional<double> CertificateExpiry(boost::asio::ssl::context& context);

}  // namespace fencegate::gateway::tls
