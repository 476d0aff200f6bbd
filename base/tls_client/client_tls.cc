#include "base/tls_client/client_tls.h"

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <boost/asio/ip/address.hpp>

namespace fencegate::tls_client {
namespace ssl = boost::asio::ssl;

namespace {

std::string OpenSslReason() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unreadable";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

}  // namespace

std::shared_ptr<ssl::context> BuildClientContext(const ClientTlsOptions& options,
                                                 std::string* error) {
  ERR_clear_error();
  auto context = std::make_shared<ssl::context>(ssl::context::tls_client);
  SSL_CTX* native = context->native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  SSL_CTX_set_options(native, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
  const int loaded = options.ca_file.empty()
                         ? SSL_CTX_set_default_verify_paths(native)
                         : SSL_CTX_load_verify_locations(native, options.ca_file.c_str(), nullptr);
  if (loaded != 1) {
    *error = "cannot load the CA " +
             (options.ca_file.empty() ? "store" : "file " + options.ca_file) + ": " +
             OpenSslReason();
    return nullptr;
  }
  SSL_CTX_set_verify(native, SSL_VERIFY_PEER, nullptr);
  if (!options.client_cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(native, options.client_cert_file.c_str()) != 1) {
      *error =
          "cannot load the client certificate " + options.client_cert_file + ": " + OpenSslReason();
      return nullptr;
    }
    if (SSL_CTX_use_PrivateKey_file(native, options.client_key_file.c_str(), SSL_FILETYPE_PEM) !=
            1 ||
        SSL_CTX_check_private_key(native) != 1) {
      *error = "cannot use the client key " + options.client_key_file + ": " + OpenSslReason();
      return nullptr;
    }
  }
  static const unsigned char kAlpn[] = "\x08http/1.1";
  SSL_CTX_set_alpn_protos(native, kAlpn, sizeof(kAlpn) - 1);
  return context;
}

void PrepareClientHandshake(const ClientTlsOptions& options, const std::string& host, SSL* ssl) {
  const std::string& name = options.server_name.empty() ? host : options.server_name;
  boost::system::error_code not_ip;
  boost::asio::ip::make_address(name, not_ip);
  // SNI carries host names only (RFC 6066).
  if (not_ip) SSL_set_tlsext_host_name(ssl, name.c_str());
  if (!options.verify_hostname) return;
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  if (not_ip) {
    X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size());
  } else {
    X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
  }
}

}  // namespace fencegate::tls_client
