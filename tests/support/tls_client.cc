#include "tests/support/tls_client.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

namespace fencegate::integration {

namespace net = boost::asio;
namespace beast = boost::beast;
using boost::system::error_code;

namespace {

net::ssl::context MakeContext(const TlsClientOptions& options) {
  net::ssl::context context(net::ssl::context::tls_client);
  context.load_verify_file(options.ca_file);
  context.set_verify_mode(net::ssl::verify_peer);
  if (!options.cert_file.empty()) {
    context.use_certificate_chain_file(options.cert_file);
    context.use_private_key_file(options.key_file, net::ssl::context::pem);
  }
  return context;
}

}  // namespace

TlsConnection::TlsConnection(const TlsClientOptions& options, std::chrono::milliseconds timeout)
    : context_(MakeContext(options)),
      stream_(io_context_, context_),
      server_name_(options.server_name),
      timeout_(timeout) {
  stream_.set_verify_callback(net::ssl::host_name_verification(server_name_));
  SSL_set_tlsext_host_name(stream_.native_handle(), server_name_.c_str());
  static const unsigned char kAlpn[] = "\x08http/1.1";
  SSL_set_alpn_protos(stream_.native_handle(), kAlpn, sizeof(kAlpn) - 1);
}

template <typename Start>
error_code TlsConnection::Run(Start start) {
  error_code result = net::error::would_block;
  beast::get_lowest_layer(stream_).expires_after(timeout_);
  start([&result](error_code ec, std::size_t = 0) { result = ec; });
  io_context_.restart();
  io_context_.run();
  if (result) error_ = result.message();
  return result;
}

bool TlsConnection::Connect(std::uint16_t port) {
  const net::ip::tcp::endpoint endpoint(net::ip::make_address("127.0.0.1"), port);
  if (Run([&](auto handler) {
        beast::get_lowest_layer(stream_).async_connect(endpoint, handler);
      })) {
    error_ = "connect: " + error_;
    return false;
  }
  if (Run([&](auto handler) { stream_.async_handshake(net::ssl::stream_base::client, handler); })) {
    error_ = "handshake: " + error_;
    return false;
  }
  return true;
}

std::optional<Response> TlsConnection::RoundTrip(Request request) {
  request.prepare_payload();
  if (Run([&](auto handler) { http::async_write(stream_, request, handler); })) {
    return std::nullopt;
  }
  http::response_parser<http::string_body> parser;
  parser.body_limit(boost::none);
  if (Run([&](auto handler) { http::async_read(stream_, buffer_, parser, handler); })) {
    return std::nullopt;
  }
  return parser.release();
}

std::string TlsConnection::ServerCommonName() {
  X509* cert = SSL_get0_peer_certificate(stream_.native_handle());
  if (cert == nullptr) return {};
  char name[256] = {};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, name, sizeof(name));
  return name;
}

std::string TlsConnection::AlpnProtocol() {
  const unsigned char* protocol = nullptr;
  unsigned int length = 0;
  SSL_get0_alpn_selected(stream_.native_handle(), &protocol, &length);
  return std::string(reinterpret_cast<const char*>(protocol), length);
}

std::optional<Response> TlsFetch(std::uint16_t port, const TlsClientOptions& options,
                                 Request request, std::string* error) {
  TlsConnection connection(options);
  std::optional<Response> response;
  if (connection.Connect(port)) response = connection.RoundTrip(std::move(request));
  if (!response && error != nullptr) *error = connection.error();
  return response;
}

}  // namespace fencegate::integration
