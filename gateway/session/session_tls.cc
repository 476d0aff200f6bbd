// The TLS steps of a Session (gateway/session/session.h): before the first request and after the
// last.
#include <boost/asio/write.hpp>

#include "gateway/server/network_thread.h"
#include "gateway/session/session.h"
#include "gateway/tls/handshake.h"
#include "gateway/tls/listener_tls.h"
#include "gateway/tls/plain_http_refusal.h"

namespace fencegate::gateway {
namespace net = boost::asio;
using boost::system::error_code;

namespace {

// A ClientHello fits in the first read; plain HTTP shows itself in its first byte.
constexpr std::size_t kFirstRead = 4096;

}  // namespace

// The first bytes are read off the TCP layer and handed to the handshake afterwards, so that a
// plain HTTP request can be told apart and answered in plain HTTP instead of with TLS garbage.
void Session::StartTls() {
  stream_.expires_after(context_.traffic_tls->settings().handshake_timeout);
  stream_.lowest().async_read_some(buffer_.prepare(kFirstRead),
                                   [self = shared_from_this()](error_code ec, std::size_t bytes) {
                                     self->OnTlsFirstBytes(ec, bytes);
                                   });
}

void Session::OnTlsFirstBytes(error_code ec, std::size_t bytes) {
  if (ec) {
    context_.traffic_tls->CountHandshake(ec == boost::beast::error::timeout
                                             ? tls::HandshakeResult::kTimeout
                                             : tls::HandshakeResult::kClosed);
    CloseSocket();
    return;
  }
  buffer_.commit(bytes);
  if (static_cast<const unsigned char*>(buffer_.data().data())[0] != tls::kTlsHandshakeRecord) {
    RefusePlainHttp();
    return;
  }
  // Boost 1.81's ssl_stream checks this handler against the unbuffered signature (without the
  // byte count), so the count gets a default.
  stream_.tls().async_handshake(net::ssl::stream_base::server, buffer_.data(),
                                [self = shared_from_this()](error_code ec, std::size_t used = 0) {
                                  self->buffer_.consume(used);
                                  self->OnTlsHandshake(ec);
                                });
}

// Not a request of this listener's protocol: no request is counted, only the handshake result.
void Session::RefusePlainHttp() {
  context_.traffic_tls->CountHandshake(tls::HandshakeResult::kPlainHttp);
  phase_ = Phase::kClosed;
  scratch_ = tls::PlainHttpOnTlsResponse();
  stream_.expires_after(generation_.config.timeouts.response_write);
  net::async_write(stream_.lowest(), net::buffer(scratch_),
                   [self = shared_from_this()](error_code, std::size_t) { self->CloseSocket(); });
}

void Session::OnTlsHandshake(error_code ec) {
  if (ec || buffer_.size() != 0) {
    context_.traffic_tls->CountHandshake(
        ec ? tls::ClassifyHandshakeFailure(ec, stream_.tls().native_handle())
           : tls::HandshakeResult::kProtocol);
    CloseSocket();
    return;
  }
  context_.traffic_tls->CountHandshake(tls::HandshakeResult::kOk);
  tls_established_ = true;
  peer_identity_ = tls::ReadPeerIdentity(stream_.tls().native_handle());
  StartRequest();
}

// close_notify tells the client the response was complete (not truncated); waiting for the
// client's own is bounded by shutdown_timeout.
void Session::ShutdownTls() {
  tls_established_ = false;
  stream_.expires_after(context_.traffic_tls->settings().shutdown_timeout);
  stream_.tls().async_shutdown([self = shared_from_this()](error_code) { self->CloseSocket(); });
}

}  // namespace fencegate::gateway
