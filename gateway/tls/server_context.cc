#include "gateway/tls/server_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

namespace fencegate::gateway::tls {
namespace ssl = boost::asio::ssl;

namespace {

// Sessions resumed from a ticket skip client certificate verification; OpenSSL refuses to
// resume a verified session without a context id, so one is set (any fixed bytes do).
constexpr unsigned char kSessionIdContext[] = "fencegate";
// ALPN wire format: length-prefixed protocol names.
constexpr unsigned char kHttp11[] = "\x08http/1.1";

// The newest error on OpenSSL's queue, or `fallback`.
std::string OpenSslReason(std::string_view fallback) {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return std::string(fallback);
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

// ALPN: http/1.1 is the only protocol spoken. A client offering only others (h2 alone) goes
// on without ALPN rather than failing: it may still speak HTTP/1.1.
int SelectAlpn(SSL*, const unsigned char** out, unsigned char* out_length, const unsigned char* in,
               unsigned int in_length, void*) {
  unsigned char* selected = nullptr;
  const int result =
      SSL_select_next_proto(&selected, out_length, kHttp11, sizeof(kHttp11) - 1, in, in_length);
  // SSL_select_next_proto's first list is the server's; a match is a protocol of ours.
  if (result != OPENSSL_NPN_NEGOTIATED) return SSL_TLSEXT_ERR_NOACK;
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace

std::shared_ptr<ssl::context> BuildServerContext(const ServerTlsSettings& settings,
                                                 std::string* error) {
  ERR_clear_error();
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = context->native_handle();
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                       ssl::context::single_dh_use);
  SSL_CTX_set_options(
      native, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_COMPRESSION);
  SSL_CTX_set_min_proto_version(native, settings.tls13_only ? TLS1_3_VERSION : TLS1_2_VERSION);
  if (SSL_CTX_set_cipher_list(native, settings.ciphers.c_str()) != 1) {
    *error = "tls ciphers '" + settings.ciphers + "': " + OpenSslReason("no usable cipher");
    return nullptr;
  }
  if (SSL_CTX_use_certificate_chain_file(native, settings.cert_file.c_str()) != 1) {
    *error = "cannot load the certificate chain " + settings.cert_file + ": " +
             OpenSslReason("unreadable");
    return nullptr;
  }
  if (SSL_CTX_use_PrivateKey_file(native, settings.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    *error =
        "cannot load the private key " + settings.key_file + ": " + OpenSslReason("unreadable");
    return nullptr;
  }
  if (SSL_CTX_check_private_key(native) != 1) {
    *error = "the private key " + settings.key_file + " does not match the certificate " +
             settings.cert_file;
    ERR_clear_error();
    return nullptr;
  }
  SSL_CTX_set_alpn_select_cb(native, SelectAlpn, nullptr);
  SSL_CTX_set_session_id_context(native, kSessionIdContext, sizeof(kSessionIdContext) - 1);

  if (settings.client_auth != ClientAuth::kOff) {
    if (SSL_CTX_load_verify_locations(native, settings.client_ca_file.c_str(), nullptr) != 1) {
      *error = "cannot load the client CA file " + settings.client_ca_file + ": " +
               OpenSslReason("unreadable");
      return nullptr;
    }
    // Tells clients which CAs to pick a certificate for.
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(settings.client_ca_file.c_str());
    if (names == nullptr) {
      *error = "no CA certificate in the client CA file " + settings.client_ca_file;
      ERR_clear_error();
      return nullptr;
    }
    SSL_CTX_set_client_CA_list(native, names);
    int mode = SSL_VERIFY_PEER;
    if (settings.client_auth == ClientAuth::kRequired) mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    SSL_CTX_set_verify(native, mode, nullptr);
  }
  return context;
}

}  // namespace fencegate::gateway::tls
