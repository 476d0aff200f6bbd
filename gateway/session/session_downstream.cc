// The client side of a Session as adapters see it (adapters::Downstream in
// resource_adapters/adapter.h): the request body read from the socket under timeouts.body_read,
// and the response written under timeouts.response_write. The proxied GET/PUT hot path.
#include <algorithm>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>

#include "base/net/deadline_clock.h"
#include "gateway/http/header_sanitizer.h"
#include "gateway/http/request_fields.h"
#include "gateway/server/network_thread.h"
#include "gateway/session/session.h"

namespace fencegate::gateway {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;

namespace {

// A chunked body is read through buffer_ (the parser strips the framing) at most this much at
// a time, which bounds what buffer_ grows to for the request.
constexpr std::size_t kMaxChunkedBodyRead = 64 * 1024;
constexpr std::string_view kContinueResponse = "HTTP/1.1 100 Continue\r\n\r\n";

bool StatusHasNoBody(unsigned status) { return status < 200 || status == 204 || status == 304; }

}  // namespace

bool Session::body_done() const { return parser_->is_done(); }

void Session::AsyncReadBody(net::mutable_buffer buffer, ReadHandler handler) {
  read_handler_ = std::move(handler);
  if (SelfFenced() || fenced_.write_cut()) {
    // No more body bytes upstream once the shard's lease may have ended, or the write's
    // deadline passed: the adapter abandons the upload and the backend sees a truncated body.
    const error_code ec = fenced_.write_cut() ? error_code(beast::error::timeout)
                                              : error_code(net::error::operation_aborted);
    net::post(stream_.get_executor(), [self = shared_from_this(), ec] {
      auto handler = std::move(self->read_handler_);
      handler(ec, 0, false);
    });
    return;
  }
  if (parser_->is_done()) {
    net::post(stream_.get_executor(), [self = shared_from_this()] {
      auto handler = std::move(self->read_handler_);
      handler(error_code{}, 0, true);
    });
    return;
  }
  if (exchange_.expect_continue && !exchange_.continue_sent) {
    // Admission is done, so the client may now send the body.
    exchange_.continue_sent = true;
    stream_.expires_after(generation_.config.timeouts.response_write);
    net::async_write(stream_, net::buffer(kContinueResponse),
                     [self = shared_from_this(), buffer](error_code ec, std::size_t) {
                       if (ec) {
                         auto handler = std::move(self->read_handler_);
                         handler(ec, 0, false);
                         return;
                       }
                       self->ReadBodySome(buffer);
                     });
    return;
  }
  ReadBodySome(buffer);
}

std::optional<adapters::BodyRead> Session::ReadBodyNowOrLater(net::mutable_buffer buffer,
                                                              ReadHandler handler) {
  if (SelfFenced() || fenced_.write_cut() ||
      (exchange_.expect_continue && !exchange_.continue_sent)) {
    AsyncReadBody(buffer, std::move(handler));
    return std::nullopt;
  }
  if (parser_->is_done()) return adapters::BodyRead{.ec = {}, .bytes = 0, .done = true};
  TargetBodyRead(buffer);
  error_code ec;
  if (ParseBufferedBody(ec)) return TakeBodyRead(ec);
  read_handler_ = std::move(handler);
  ReadBodyFromSocket();
  return std::nullopt;
}

bool Session::WaitForBodyNowOrLater(WaitHandler handler) {
  // A TLS connection may hold decrypted bytes the socket no longer shows: read at once there.
  if (stream_.is_tls() || buffer_.size() > 0 || parser_->is_done() || fenced_.write_cut() ||
      SelfFenced() || (exchange_.expect_continue && !exchange_.continue_sent)) {
    return true;
  }
  body_wait_handler_ = std::move(handler);
  body_read_deadline_.Begin(adapters::DeadlineClock::Now() + generation_.config.timeouts.body_read,
                            *this);
  stream_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this()](error_code ec) {
    if (self->body_read_deadline_.End() && ec == net::error::operation_aborted) {
      ec = beast::error::timeout;
    }
    if (!ec && self->fenced_.write_cut()) ec = beast::error::timeout;
    auto handler = std::move(self->body_wait_handler_);
    handler(ec);
  });
  return false;
}

void Session::ReadBodySome(net::mutable_buffer buffer) {
  TargetBodyRead(buffer);
  ContinueBodyRead(/*initiating=*/true);
}

void Session::TargetBodyRead(net::mutable_buffer buffer) {
  body_read_target_ = buffer;
  // Eager: one put() goes on through every chunk header, chunk body, the last chunk and the
  // trailer that buffer_ holds. Not eager, put() stops after one step (a chunk header, say), and
  // ContinueBodyRead would then wait on the socket for bytes the client already sent: a chunked
  // body whose remaining chunks, or only its last chunk, arrived with the previous piece hung
  // until the body_read timeout and never reached the backend whole.
  parser_->eager(true);
  auto& body = parser_->get().body();
  body.data = buffer.data();
  body.size = buffer.size();
}

// Fills the adapter's buffer with as much body as one socket read gives. A Content-Length body
// with nothing buffered is read straight into the adapter's buffer (no copy, and as large as
// that buffer); anything else (bytes that came with the header, chunked framing) goes through
// buffer_ and the parser. The socket is read directly, not through stream_, whose per-operation
// timer would cost two timer syscalls per piece: body_read_deadline_ keeps timeouts.body_read
// as the idle timeout of each read.
void Session::ContinueBodyRead(bool initiating) {
  error_code ec;
  if (ParseBufferedBody(ec)) {
    if (!initiating) {
      CompleteBodyRead(ec);
      return;
    }
    // Never complete inside AsyncReadBody itself.
    net::post(stream_.get_executor(),
              [self = shared_from_this(), ec] { self->CompleteBodyRead(ec); });
    return;
  }
  ReadBodyFromSocket();
}

bool Session::ParseBufferedBody(error_code& ec) {
  if (buffer_.size() == 0) return false;
  buffer_.consume(parser_->put(buffer_.data(), ec));
  if (ec == http::error::need_buffer || ec == http::error::need_more) ec = {};
  const bool produced = parser_->get().body().size < body_read_target_.size();
  return ec || produced || parser_->is_done();
}

void Session::ReadBodyFromSocket() {
  auto& body = parser_->get().body();
  const auto remaining = parser_->content_length_remaining();
  const bool in_place = buffer_.size() == 0 && !parser_->chunked() && remaining.has_value();
  const net::mutable_buffer target =
      in_place
          ? net::buffer(body.data,
                        static_cast<std::size_t>(std::min<std::uint64_t>(body.size, *remaining)))
          : buffer_.prepare(
                std::clamp(body_read_target_.size(), kHeaderReadChunk, kMaxChunkedBodyRead));
  body_read_deadline_.Begin(adapters::DeadlineClock::Now() + generation_.config.timeouts.body_read,
                            *this);
  stream_.untimed().async_read_some(
      target, [self = shared_from_this(), in_place](error_code ec, std::size_t bytes) {
        if (self->body_read_deadline_.End() && ec == net::error::operation_aborted) {
          ec = beast::error::timeout;
        }
        self->OnBodyBytes(ec, bytes, in_place);
      });
}

void Session::OnBodyBytes(error_code ec, std::size_t bytes, bool in_place) {
  if (ec == net::error::eof) {
    // The client closed before the body ended: the parser says how (partial_message).
    ec = {};
    parser_->put_eof(ec);
    if (!ec) ec = http::error::partial_message;
  }
  if (ec) {
    CompleteBodyRead(ec);
    return;
  }
  if (!in_place) {
    buffer_.commit(bytes);
    ContinueBodyRead(/*initiating=*/false);
    return;
  }
  // The bytes already sit where the body goes; the parser accounts for them (RelayBody does
  // not copy a piece onto itself) and so still knows where the body ends.
  auto& body = parser_->get().body();
  parser_->put(net::buffer(body.data, bytes), ec);
  if (ec == http::error::need_buffer || ec == http::error::need_more) ec = {};
  CompleteBodyRead(ec);
}

void Session::CompleteBodyRead(error_code ec) {
  const adapters::BodyRead read = TakeBodyRead(ec);
  auto handler = std::move(read_handler_);
  handler(read.ec, read.bytes, read.done);
}

adapters::BodyRead Session::TakeBodyRead(error_code ec) {
  const std::size_t bytes = body_read_target_.size() - parser_->get().body().size;
  const bool done = parser_->is_done();
  if (ec || done) body_read_deadline_.Stop();
  exchange_.bytes_in += bytes;
  idempotency_.OnRequestBody(body_read_target_.data(), bytes);
  return {.ec = ec, .bytes = bytes, .done = done};
}

void Session::AsyncWriteResponse(adapters::ResponseHeader&& header, net::const_buffer body,
                                 bool last, WriteHandler handler) {
  BeginResponse(std::move(header));
  AsyncWriteBody(body, last, std::move(handler));
}

bool Session::WriteResponseNowOrLater(adapters::ResponseHeader&& header, net::const_buffer body,
                                      bool last, WriteHandler handler) {
  BeginResponse(std::move(header));
  return WriteBodyNowOrLater(body, last, std::move(handler));
}

void Session::BeginResponse(adapters::ResponseHeader&& header) {
  response_.base() = std::move(header);
  SanitizeResponseHeader(response_.base());
  response_.insert(http::field::via, kViaValue);
  exchange_.status = response_.result_int();
  exchange_.response_has_body = !exchange_.head && !StatusHasNoBody(exchange_.status);
  // A response sent before the whole request body was read leaves the connection unusable.
  if (!parser_->is_done()) exchange_.close_after = true;
  if (idempotency_.claimed()) idempotency_.OnResponseHeader(response_.base());
  PrepareResponseHeader();
  message_writer_.Start(response_, exchange_.response_has_body);
}

void Session::AsyncWriteBody(net::const_buffer body, bool last, WriteHandler handler) {
  write_handler_ = std::move(handler);
  if (idempotency_.claimed()) {
    idempotency_.OnResponseBody(body);
    if (last) {
      WriteLastPieceDurably(body);
      return;
    }
  }
  WriteBodyPiece(body, last);
}

void Session::PrepareResponseHeader() {
  const unsigned version = parser_ && parser_->is_header_done() ? parser_->get().version() : 11;
  response_.version(version == 10 ? 10 : 11);
  response_.set(kXRequestId, exchange_.request_id);
  if (exchange_.response_has_body && !response_.has_content_length()) {
    if (response_.version() == 11) {
      response_.chunked(true);
    } else {
      exchange_.close_after = true;  // close-delimited body for an HTTP/1.0 client
    }
  }
  // After a reload, a connection on the previous configuration ends with this response unless
  // the client already sent more (pipelined bytes are answered first, on the same generation).
  const bool superseded = !thread_.IsCurrent(generation_view_) && buffer_.size() == 0;
  const bool keep_alive = exchange_.keep_alive && !exchange_.close_after && !superseded &&
                          !context_.draining.load(std::memory_order_relaxed);
  if (!keep_alive) exchange_.close_after = true;
  // The response has no Connection field here: SanitizeResponseHeader removed the backend's,
  // and the gateway's own and replayed responses never carry one. So a field is needed only
  // when persistence differs from the version's default; Beast's keep_alive() would parse and
  // rebuild the field's token list to say the same.
  if (keep_alive != (response_.version() == 11)) {
    response_.insert(http::field::connection, keep_alive ? "keep-alive" : "close");
  }
}

bool Session::WriteBodyNowOrLater(net::const_buffer body, bool last, WriteHandler handler) {
  // A response kept for idempotent replay ends with a store write: always the long way.
  if (idempotency_.claimed()) {
    AsyncWriteBody(body, last, std::move(handler));
    return false;
  }
  const std::size_t bytes = PrepareBodyPiece(body, last);
  if (adapters::SendAtOnce(stream_, write_gather_)) {
    exchange_.bytes_out += bytes;
    return true;
  }
  write_handler_ = std::move(handler);
  WritePieceLater(bytes);
  return false;
}

void Session::WriteBodyPiece(net::const_buffer body, bool last) {
  WritePieceLater(PrepareBodyPiece(body, last));
}

std::size_t Session::PrepareBodyPiece(net::const_buffer body, bool last) {
  if (!exchange_.response_has_body) body = net::const_buffer();
  message_writer_.Next(body, last, write_gather_);
  return body.size();
}

void Session::WritePieceLater(std::size_t body_bytes) {
  auto self = shared_from_this();
  client_deadline_.Begin(
      adapters::DeadlineClock::Now() + generation_.config.timeouts.response_write, self);
  adapters::AsyncWriteAll(
      stream_.untimed(), write_gather_,
      [self = std::move(self), bytes = body_bytes](error_code ec) {
        if (self->client_deadline_.End() && ec == net::error::operation_aborted) {
          ec = beast::error::timeout;
        }
        if (!ec) self->exchange_.bytes_out += bytes;
        auto handler = std::move(self->write_handler_);
        handler(ec);
      });
}

}  // namespace fencegate::gateway
