#include "gateway/tls/handshake.h"

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <memory>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/error.hpp>

namespace fencegate::gateway::tls {
namespace net = boost::asio;

namespace {

HandshakeResult FromVerifyResult(long verify) {
  switch (verify) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return HandshakeResult::kExpiredCert;
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
      return HandshakeResult::kUnknownCa;
    default:
      return HandshakeResult::kBadCert;
  }
}

std::string NameToString(X509_NAME* name) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  if (!bio || X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253) < 0) return {};
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio.get(), &data);
  return length > 0 ? std::string(data, static_cast<std::size_t>(length)) : std::string();
}

}  // namespace

std::string_view HandshakeResultName(HandshakeResult result) {
  switch (result) {
    case HandshakeResult::kOk:
      return "ok";
    case HandshakeResult::kPlainHttp:
      return "plain_http";
    case HandshakeResult::kNoClientCert:
      return "no_client_cert";
    case HandshakeResult::kUnknownCa:
      return "unknown_ca";
    case HandshakeResult::kExpiredCert:
      return "expired_cert";
    case HandshakeResult::kBadCert:
      return "bad_cert";
    case HandshakeResult::kClientRejectedCert:
      return "client_rejected_cert";
    case HandshakeResult::kProtocol:
      return "protocol";
    case HandshakeResult::kTimeout:
      return "timeout";
    case HandshakeResult::kClosed:
      return "closed";
  }
  return "protocol";
}

HandshakeResult ClassifyHandshakeFailure(const boost::system::error_code& ec, SSL* ssl) {
  if (ec == boost::beast::error::timeout) return HandshakeResult::kTimeout;
  if (ec.category() != net::error::get_ssl_category()) return HandshakeResult::kClosed;
  if (ec == net::ssl::error::stream_truncated) return HandshakeResult::kClosed;
  const long verify = SSL_get_verify_result(ssl);
  const int reason = ERR_GET_REASON(static_cast<unsigned long>(ec.value()));
  if (reason == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE) return HandshakeResult::kNoClientCert;
  if (reason == SSL_R_CERTIFICATE_VERIFY_FAILED && verify != X509_V_OK) {
    return FromVerifyResult(verify);
  }
  if (reason == SSL_R_HTTP_REQUEST || reason == SSL_R_HTTPS_PROXY_REQUEST) {
    return HandshakeResult::kPlainHttp;
  }
  // The client's alerts about our certificate (SSL_R_SSLV3_ALERT_* / SSL_R_TLSV1_ALERT_*).
  switch (reason) {
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
    case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
      return HandshakeResult::kClientRejectedCert;
    default:
      return HandshakeResult::kProtocol;
  }
}

PeerIdentity ReadPeerIdentity(SSL* ssl) {
  PeerIdentity identity;
  std::unique_ptr<X509, decltype(&X509_free)> cert(SSL_get1_peer_certificate(ssl), X509_free);
  if (!cert) return identity;
  identity.subject = NameToString(X509_get_subject_name(cert.get()));
  identity.verified = SSL_get_verify_result(ssl) == X509_V_OK;
  auto* names = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert.get(), NID_subject_alt_name, nullptr, nullptr));
  if (names == nullptr) return identity;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
    if (name->type != GEN_DNS && name->type != GEN_URI) continue;
    const ASN1_IA5STRING* text =
        name->type == GEN_DNS ? name->d.dNSName : name->d.uniformResourceIdentifier;
    std::string value(reinterpret_cast<const char*>(ASN1_STRING_get0_data(text)),
                      static_cast<std::size_t>(ASN1_STRING_length(text)));
    (name->type == GEN_DNS ? identity.dns_sans : identity.uri_sans).push_back(std::move(value));
  }
  GENERAL_NAMES_free(names);
  return identity;
}

}  // namespace fencegate::gateway::tls
