#include "gateway/tls/certificate_expiry.h"

#include <openssl/asn1.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <ctime>

namespace fencegate::gateway::tls {

std::optional<double> CertificateExpiry(boost::asio::ssl::context& context) {
  X509* leaf = SSL_CTX_get0_certificate(context.native_handle());
  if (leaf == nullptr) return std::nullopt;
  std::tm not_after{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(leaf), &not_after) != 1) return std::nullopt;
  return static_cast<double>(timegm(&not_after));
}

}  // namespace fencegate::gateway::tls
