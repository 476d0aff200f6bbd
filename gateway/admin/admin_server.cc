#include "gateway/admin/admin_server.h"
#include "gateway/server/listen_socket.h"

#include <chrono>
#include <optional>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/write.hpp>

#include "base/tls_client/plain_or_tls_stream.h"
#include "gateway/admin/admin_events.h"
#include "gateway/http/time_format.h"
#include "gateway/observability/rocksdb_store_metrics.h"
#include "gateway/tls/handshake.h"
#include "gateway/tls/plain_http_refusal.h"

namespace fencegate::gateway {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;

namespace {

constexpr auto kAdminTimeout = std::chrono::seconds(30);
constexpr std::uint32_t kAdminHeaderLimit = 16 * 1024;
constexpr std::uint64_t kAdminBodyLimit = 64 * 1024;
// A ClientHello fits in the first read; plain HTTP shows itself in its first byte.
constexpr std::size_t kFirstTlsRead = 4096;

// The admin listener's own io_context executor, named (see plain_or_tls_stream.h).
using AdminSocket = tcp::socket::rebind_executor<net::io_context::executor_type>::other;

// One operator connection: read a request, answer it, repeat while keep-alive. Plain or TLS
// through one PlainOrTlsStream, so Beast's HTTP read and write are instantiated once. A GET
// /admin/events turns the connection into an event stream until the client or Stop() ends it.
class AdminSession : public std::enable_shared_from_this<AdminSession> {
 public:
  // `context` is null for a plain session; a TLS session keeps it for its whole life (a
  // reload swaps the listener's context, not this one).
  AdminSession(AdminSocket socket, AdminApi& api, const EventHub* events,
               std::shared_ptr<net::ssl::context> context)
      : stream_(tls_client::TcpStream(std::move(socket)), std::move(context)),
        api_(api),
        events_(events),
        event_timer_(stream_.get_executor()) {}

  // Plain: straight to the first request.
  void Start() { Read(); }

  // TLS: the handshake first, bounded by the listener's handshake_timeout; failures are
  // counted by reason. The first bytes are read off the TCP layer and handed to the handshake
  // afterwards, so that plain HTTP can be told apart and answered in plain HTTP.
  void StartTls(const tls::ListenerTls& listener) {
    stream_.expires_after(listener.settings().handshake_timeout);
    stream_.lowest().async_read_some(
        buffer_.prepare(kFirstTlsRead),
        [self = shared_from_this(), &listener](error_code ec, std::size_t bytes) {
          self->OnTlsFirstBytes(listener, ec, bytes);
        });
  }

 private:
  void OnTlsFirstBytes(const tls::ListenerTls& listener, error_code ec, std::size_t bytes) {
    if (ec) {
      listener.CountHandshake(ec == beast::error::timeout ? tls::HandshakeResult::kTimeout
                                                          : tls::HandshakeResult::kClosed);
      Close();
      return;
    }
    buffer_.commit(bytes);
    if (static_cast<const unsigned char*>(buffer_.data().data())[0] != tls::kTlsHandshakeRecord) {
      listener.CountHandshake(tls::HandshakeResult::kPlainHttp);
      refusal_ = tls::PlainHttpOnTlsResponse();
      stream_.expires_after(kAdminTimeout);
      net::async_write(stream_.lowest(), net::buffer(refusal_),
                       [self = shared_from_this()](error_code, std::size_t) { self->Close(); });
      return;
    }
    // Boost 1.81's ssl_stream checks this handler against the unbuffered signature (without
    // the byte count), so the count gets a default.
    stream_.tls().async_handshake(
        net::ssl::stream_base::server, buffer_.data(),
        [self = shared_from_this(), &listener](error_code ec, std::size_t used = 0) {
          self->buffer_.consume(used);
          self->OnTlsHandshake(listener, ec);
        });
  }

  void OnTlsHandshake(const tls::ListenerTls& listener, error_code ec) {
    if (ec || buffer_.size() != 0) {
      listener.CountHandshake(ec ? tls::ClassifyHandshakeFailure(ec, stream_.tls().native_handle())
                                 : tls::HandshakeResult::kProtocol);
      Close();
      return;
    }
    listener.CountHandshake(tls::HandshakeResult::kOk);
    peer_ = tls::ReadPeerIdentity(stream_.tls().native_handle());
    Read();
  }

  void Read() {
    parser_.emplace();
    parser_->header_limit(kAdminHeaderLimit);
    parser_->body_limit(kAdminBodyLimit);
    stream_.expires_after(kAdminTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](error_code ec, std::size_t) { self->OnRead(ec); });
  }

  void OnRead(error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == net::error::operation_aborted) {
      Close();
      return;
    }
    response_ = {};
    if (ec) {
      response_.result(http::status::bad_request);
      response_.keep_alive(false);
    } else if (!api_.Handle(parser_->get(), peer_, &response_,
                            [self = shared_from_this()] { self->Write(false); })) {
      return;  // answered later, on this thread (POST /admin/reload)
    }
    if (!ec && events_ != nullptr && IsEventStreamResponse(response_)) {
      StartEventStream(EventStreamStart(parser_->get()["Last-Event-ID"], *events_));
      return;
    }
    Write(!ec && parser_->get().method() == http::verb::head);
  }

  void Write(bool head) {
    response_.prepare_payload();
    if (head) response_.body().clear();
    stream_.expires_after(kAdminTimeout);
    http::async_write(stream_, response_,
                      [self = shared_from_this()](error_code write_ec, std::size_t) {
                        if (write_ec || !self->response_.keep_alive()) {
                          self->Close();
                          return;
                        }
                        self->Read();
                      });
  }

  // The stream's header (chunked, so each batch of events is one chunk), then a look at the hub
  // every kEventPollInterval: a batch when there is news, a comment when the stream was quiet
  // for kEventKeepaliveInterval. The admin timeout bounds each write, so a reader that stops
  // reading is dropped rather than held; the hub never waits for it either way.
  void StartEventStream(std::uint64_t after) {
    event_after_ = after;
    response_.chunked(true);
    header_serializer_.emplace(response_);
    stream_.expires_after(kAdminTimeout);
    http::async_write_header(stream_, *header_serializer_,
                             [self = shared_from_this()](error_code ec, std::size_t) {
                               if (ec) {
                                 self->Close();
                                 return;
                               }
                               self->last_event_write_ = std::chrono::steady_clock::now();
                               self->SendEvents();
                             });
  }

  void WaitForEvents() {
    event_timer_.expires_after(kEventPollInterval);
    event_timer_.async_wait([self = shared_from_this()](error_code ec) {
      if (!ec) self->SendEvents();
    });
  }

  void SendEvents() {
    event_text_.clear();
    event_after_ = AppendEvents(*events_, event_after_, &event_text_);
    const auto now = std::chrono::steady_clock::now();
    if (event_text_.empty()) {
      if (now - last_event_write_ < kEventKeepaliveInterval) {
        WaitForEvents();
        return;
      }
      event_text_ = ": keepalive\n\n";
    }
    last_event_write_ = now;
    stream_.expires_after(kAdminTimeout);
    net::async_write(stream_, http::make_chunk(net::buffer(event_text_)),
                     [self = shared_from_this()](error_code ec, std::size_t) {
                       if (ec) {
                         self->Close();
                         return;
                       }
                       self->WaitForEvents();
                     });
  }

  void Close() {
    error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  }

  tls_client::PlainOrTlsStream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  AdminApi::Response response_;
  AdminApi& api_;
  const EventHub* events_;  // null: no event feed
  // The event stream's state (GET /admin/events).
  std::optional<http::response_serializer<http::string_body>> header_serializer_;
  net::steady_timer event_timer_;
  std::uint64_t event_after_ = 0;  // the id of the last event sent
  std::chrono::steady_clock::time_point last_event_write_;
  std::string event_text_;
  PeerIdentity peer_;    // the client certificate (TLS only): an admin credential
  std::string refusal_;  // the answer to plain HTTP on a TLS listener
};

}  // namespace

AdminServer::AdminServer(const GatewayContext& context, const tls::ListenerTls& tls)
    : context_(context), api_(context), tls_(tls), acceptor_(ioc_) {}

AdminServer::~AdminServer() {
  Stop();
  Join();
}

lockstore::Status AdminServer::Listen(const tcp::endpoint& endpoint) {
  return OpenListenSocket(acceptor_, endpoint, "admin");
}

tcp::endpoint AdminServer::local_endpoint() const {
  error_code ec;
  return acceptor_.local_endpoint(ec);
}

void AdminServer::Start() {
  api_.SetSecureCookies(tls_.Current() != nullptr);
  Accept();
  if (context_.traffic_series != nullptr) SampleTraffic();
  thread_ = std::thread([this] { ioc_.run(); });
}

void AdminServer::Stop() { ioc_.stop(); }

void AdminServer::Join() {
  if (thread_.joinable()) thread_.join();
}

void AdminServer::SampleTraffic() {
  const auto now = std::chrono::steady_clock::now();
  const auto second =
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  context_.traffic_series->Sample(second, NowUnixMs(), ReadRouteTotals(*context_.metrics));
  if (context_.rocksdb_metrics != nullptr) context_.rocksdb_metrics->SampleSyncWindow();
  // The next whole steady second, so that a late tick does not shift every later one.
  sample_timer_.expires_at(std::chrono::steady_clock::time_point(std::chrono::seconds(second + 1)));
  sample_timer_.async_wait([this](error_code ec) {
    if (!ec) SampleTraffic();
  });
}

void AdminServer::Accept() {
  acceptor_.async_accept(ioc_, [this](error_code ec, AdminSocket socket) {
    if (ec == net::error::operation_aborted) return;
    if (!ec) {
      auto context = tls_.Current();
      const bool tls = context != nullptr;
      auto session = std::make_shared<AdminSession>(std::move(socket), api_, context_.events,
                                                    std::move(context));
      if (tls) {
        session->StartTls(tls_);
      } else {
        session->Start();
      }
    }
    Accept();
  });
}

}  // namespace fencegate::gateway
