#include "resource_adapters/http/forward_exchange.h"

#include <string>
#include <string_view>
#include <utility>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/read_size.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>

#include "base/tls_client/client_tls.h"
#include "resource_adapters/client_token_field.h"
#include "resource_adapters/http/hop_by_hop.h"
#include "resource_adapters/relay_budget.h"

namespace fencegate::adapters {

namespace {

namespace beast = boost::beast;
using boost::system::error_code;
using Failure = ForwardOutcome::Failure;

// A backend that sends more interim (1xx) responses than this before the final one is broken.
constexpr int kMaxInterimResponses = 8;
// Most bytes asked of one read of a response header (Beast's async_read asks the same).
constexpr std::size_t kResponseReadSize = 65536;

bool IsIdempotentWithoutSideEffects(http::verb method) {
  return method == http::verb::get || method == http::verb::head || method == http::verb::options;
}

bool ExpectsBody(http::verb method) {
  return method == http::verb::post || method == http::verb::put || method == http::verb::patch;
}

// The client's header becomes the upstream one by a move, not a field-by-field copy (an
// allocation and a tree insert per field). The gateway still reads the request line of its
// own copy afterwards (metrics, access log, problem instance), so that is put back.
RequestHeader TakeHeader(RequestHeader& client) {
  RequestHeader taken = std::move(client);
  client.method_string(taken.method_string());
  client.target(taken.target());
  client.version(taken.version());
  return taken;
}

// A field name compared with `name`: lengths first, inline, so that most fields of a request
// (asked about twice each) cost no call.
bool IsNamed(std::string_view field_name, std::string_view name) {
  return field_name.size() == name.size() && beast::iequals(field_name, name);
}

std::string BackendName(const HttpAdapterOptions& options) {
  return options.host + ":" + std::to_string(options.port);
}

}  // namespace

ForwardExchange::ForwardExchange(boost::asio::io_context& ioc,
                                 std::shared_ptr<const HttpBackend> backend,
                                 std::shared_ptr<ServerConnectionPools> pools,
                                 std::shared_ptr<RelayBufferPool> buffers,
                                 std::shared_ptr<TimeoutQueue> response_timeouts,
                                 ForwardRequest request, Downstream& downstream,
                                 ResourceAdapter::DoneHandler done)
    : ioc_(ioc),
      backend_(std::move(backend)),
      pools_(std::move(pools)),
      choice_(ioc, *pools_, backend_->servers->connect),
      fence_key_(request.fence_key),
      pinned_server_(request.server),
      downstream_(downstream),
      done_(std::move(done)),
      upstream_request_(TakeHeader(*request.header)),
      request_has_body_(!downstream.body_done()),
      idempotent_method_(IsIdempotentWithoutSideEffects(request.header->method())),
      upstream_timeout_(std::move(response_timeouts),
                        [this] {
                          error_code ignored;
                          stream_->socket().cancel(ignored);
                        }),
      buffers_(std::move(buffers)),
      relay_buffer_size_(buffers_->buffer_bytes()) {
  PrepareUpstreamRequest(request);
}

ForwardExchange::~ForwardExchange() {
  buffers_->Give(std::move(relay_buffer_));
  buffers_->Give(std::move(spare_relay_buffer_));
  if (reserved_bytes_ > 0) backend_->options.relay_budget->Release(reserved_bytes_);
}

void ForwardExchange::PrepareUpstreamRequest(const ForwardRequest& request) {
  const HttpAdapterOptions& options = backend_->options;
  auto& req = upstream_request_;
  req.version(11);

  // One walk over the list finds the fields below and erases in place those that must not go
  // upstream: erasing or finding each by name would be a scan of the fields per name.
  // Connection (the gateway's sanitizer has normally removed it) and Expect (the gateway answers
  // "100-continue" itself before it reads the body for us) go. A client must not be able to hand
  // the backend a token of its own choosing: only the admitted token is forwarded, and only when
  // the backend is configured to check it.
  bool host = false;
  bool content_length = false;
  bool transfer_encoding = false;
  for (auto it = req.begin(); it != req.end();) {
    bool erase = false;
    switch (it->name()) {
      case http::field::connection:
      case http::field::expect:
        erase = true;
        break;
      case http::field::host:
        host = true;
        break;
      case http::field::content_length:
        content_length = true;
        break;
      case http::field::transfer_encoding:
        transfer_encoding = true;
        break;
      default:
        erase = IsNamed(it->name_string(), kClientTokenField) ||
                (!options.forward_token_header.empty() &&
                 IsNamed(it->name_string(), options.forward_token_header));
        break;
    }
    it = erase ? req.erase(it) : std::next(it);
  }

  if (!options.forward_token_header.empty() && request.fencing_token) {
    req.insert(options.forward_token_header, std::to_string(*request.fencing_token));
  }

  if (!options.host_header.empty()) {
    req.set(http::field::host, options.host_header);
  } else if (!host) {
    req.set(http::field::host, BackendName(options));
  }

  if (request_has_body_) {
    if (content_length) {
      if (transfer_encoding) req.erase(http::field::transfer_encoding);
    } else {
      req.chunked(true);
    }
  } else {
    if (transfer_encoding) req.erase(http::field::transfer_encoding);
    if (!content_length && ExpectsBody(req.method())) {
      req.content_length(0);
    }
  }
}

void ForwardExchange::Start() {
  RelayBudget* budget = backend_->options.relay_budget.get();
  if (request_has_body_ && budget != nullptr) {
    if (!budget->TryReserve(relay_buffer_size_)) {
      // Refused before anything went upstream; posted, as a done handler never runs inside
      // Forward() otherwise.
      boost::asio::post(ioc_, [self = shared_from_this()] {
        self->Finish(Failure::kNone, {}, RelayMemoryExhaustedProblem());
      });
      return;
    }
    reserved_bytes_ = relay_buffer_size_;
  }
  if (std::optional<Problem> refused = choice_.Begin(fence_key_, pinned_server_)) {
    // No usable server (nothing went out: a failure to connect, as the gateway counts it), or
    // the backend's max_pending reached.
    const Failure failure =
        refused->type == "no-healthy-backend" ? Failure::kUpstreamConnect : Failure::kNone;
    boost::asio::post(ioc_, [self = shared_from_this(), failure, refused = std::move(*refused)] {
      self->Finish(failure, {}, refused);
    });
    return;
  }
  outcome_.upstream_server = choice_.server_url();
  upstream_start_ = std::chrono::steady_clock::now();
  stream_ = choice_.TakeIdle(Resendable() ? UpstreamConnectionPool::Probe::kOnUse
                                          : UpstreamConnectionPool::Probe::kPeek);
  reused_connection_ = stream_ != nullptr;
  if (reused_connection_) {
    SendRequest();
  } else {
    Connect();
  }
}

void ForwardExchange::Connect() {
  reused_connection_ = false;
  choice_.Open([self = shared_from_this()](OpenedConnection opened) {
    self->OnConnected(std::move(opened));
  });
}

void ForwardExchange::OnConnected(OpenedConnection opened) {
  outcome_.upstream_server = choice_.server_url();
  if (!opened.connection) {
    Finish(opened.failure, opened.error, std::move(opened.problem));
    return;
  }
  stream_ = std::move(opened.connection);
  reused_connection_ = opened.reused;
  SendRequest();
}

// Every operation on a connected upstream socket goes to the socket directly, not through the
// stream, whose per-operation timer costs a timer arm, a cancel and a completion per
// operation (and timer syscalls): the thread's TimeoutQueue keeps response_timeout as the idle
// timeout of each operation, without touching a timer per exchange.
void ForwardExchange::StartUpstreamTimeout() { upstream_timeout_.Begin(); }

void ForwardExchange::EndUpstreamTimeout(error_code& ec) {
  if (upstream_timeout_.End() && ec == boost::asio::error::operation_aborted) {
    ec = beast::error::timeout;
  }
}

void ForwardExchange::SendRequest() {
  message_writer_.Start(upstream_request_, /*with_body=*/true);
  if (request_has_body_) {
    // The header goes out with the first body piece: one write (one send) instead of two.
    PumpRequestBody();
    return;
  }
  // Without a body the header is the whole request (and its last chunk, if it says chunked).
  message_writer_.Next({}, /*last=*/true, write_gather_);
  outcome_.backend_reached = true;
  if (SendAtOnce(*stream_, write_gather_)) {
    OnRequestSent();
    return;
  }
  StartUpstreamTimeout();
  AsyncWriteAll(stream_->untimed(), write_gather_, [self = shared_from_this()](error_code ec) {
    self->EndUpstreamTimeout(ec);
    if (ec) {
      self->OnUpstreamError(ec);
      return;
    }
    self->OnRequestSent();
  });
}

void ForwardExchange::OnRequestSent() {
  request_sent_ = true;
  ReadResponseHeader();
}

char* ForwardExchange::RelayBuffer(int buffer) const {
  return buffer == 0 ? relay_buffer_.get() : spare_relay_buffer_.get();
}

RelayBufferPool::Buffer& ForwardExchange::HeldBuffer(int buffer) {
  return buffer == 0 ? relay_buffer_ : spare_relay_buffer_;
}

bool ForwardExchange::MayUseSpareBuffer() {
  RelayBudget* budget = backend_->options.relay_budget.get();
  if (budget == nullptr || reserved_bytes_ >= 2 * relay_buffer_size_) return true;
  if (!budget->TryReserve(relay_buffer_size_, /*count_refusal=*/false)) return false;
  reserved_bytes_ += relay_buffer_size_;
  return true;
}

// Starts what can start: the write of a piece that was read, and the read of the next piece
// into whichever buffer is free.
void ForwardExchange::PumpRequestBody() {
  if (!body_write_outstanding_ && body_piece_ready_) {
    const BodyPiece piece = *body_piece_ready_;
    body_piece_ready_.reset();
    WriteRequestBodyChunk(piece);
  }
  if (body_read_outstanding_ || body_read_done_ || body_piece_ready_) return;
  if (!body_buffer_busy_[0]) {
    ReadRequestBodyChunk(0);
  } else if (!body_buffer_busy_[1] && MayUseSpareBuffer()) {
    ReadRequestBodyChunk(1);
  }
}

void ForwardExchange::ReadRequestBodyChunk(int buffer) {
  body_buffer_busy_[buffer] = true;
  body_read_buffer_ = buffer;
  body_read_outstanding_ = true;
  if (!HeldBuffer(buffer)) {
    // No memory until there is something to put in it: a client slow to send its body holds
    // no relay buffer while it pauses.
    const bool ready =
        downstream_.WaitForBodyNowOrLater([self = shared_from_this()](error_code ec) {
          if (ec) {
            self->OnRequestBodyChunk(ec, 0, false);
            return;
          }
          self->ReadIntoRelayBuffer();
        });
    if (!ready) return;
  }
  ReadIntoRelayBuffer();
}

void ForwardExchange::ReadIntoRelayBuffer() {
  const int buffer = body_read_buffer_;
  RelayBufferPool::Buffer& held = HeldBuffer(buffer);
  if (!held) held = buffers_->Take();
  const std::optional<BodyRead> read_now = downstream_.ReadBodyNowOrLater(
      boost::asio::buffer(held.get(), relay_buffer_size_),
      [self = shared_from_this()](error_code ec, std::size_t bytes, bool done) {
        self->OnRequestBodyChunk(ec, bytes, done);
      });
  if (read_now) OnRequestBodyChunk(read_now->ec, read_now->bytes, read_now->done);
}

void ForwardExchange::OnRequestBodyChunk(error_code ec, std::size_t bytes, bool done) {
  body_read_outstanding_ = false;
  if (deferred_upstream_error_) {
    OnUpstreamError(deferred_upstream_error_);
    return;
  }
  if (ec) {
    FailClient(ec);
    return;
  }
  outcome_.request_body_bytes += bytes;
  body_read_done_ = done;
  body_piece_ready_ = BodyPiece{body_read_buffer_, bytes, done};
  PumpRequestBody();
}

void ForwardExchange::WriteRequestBodyChunk(const BodyPiece& piece) {
  message_writer_.Next(boost::asio::buffer(RelayBuffer(piece.buffer), piece.bytes), piece.last,
                       write_gather_);
  outcome_.backend_reached = true;
  body_write_buffer_ = piece.buffer;
  body_write_short_ = piece.bytes < relay_buffer_size_;
  if (SendAtOnce(*stream_, write_gather_)) {
    OnRequestBodyWritten(piece.last);
    return;
  }
  body_write_outstanding_ = true;
  StartUpstreamTimeout();
  AsyncWriteAll(stream_->untimed(), write_gather_,
                [self = shared_from_this(), last = piece.last](error_code ec) {
                  self->OnRequestBodyWritten(ec, last);
                });
}

void ForwardExchange::OnRequestBodyWritten(error_code ec, bool last) {
  body_write_outstanding_ = false;
  EndUpstreamTimeout(ec);
  // The exchange already failed on the client side and closed the upstream connection.
  if (finished_) return;
  if (ec) {
    if (body_read_outstanding_) {
      deferred_upstream_error_ = ec;
    } else {
      OnUpstreamError(ec);
    }
    return;
  }
  OnRequestBodyWritten(last);
}

void ForwardExchange::OnRequestBodyWritten(bool last) {
  body_buffer_busy_[body_write_buffer_] = false;
  if (last) {
    OnRequestSent();
    return;
  }
  if (body_write_short_) buffers_->Give(std::move(HeldBuffer(body_write_buffer_)));
  PumpRequestBody();
}

void ForwardExchange::ReadResponseHeader() {
  parser_.emplace();
  parser_->body_limit(boost::none);
  if (upstream_request_.method() == http::verb::head) {
    parser_->skip(true);
  }
  ParseResponseHeader();
}

// Beast's async_read_header, without its two layers of composed operations per read (their
// work tracking and handler moves cost ~1k instructions per response): parse what the buffer
// holds, read on while the header is incomplete. Errors are Beast's: end_of_stream when the
// backend closed before a byte, partial_message when it closed within the header, and the
// parser's own (header_limit, bad framing).
void ForwardExchange::ParseResponseHeader() {
  if (upstream_read_buffer_.size() > 0) {
    error_code ec;
    upstream_read_buffer_.consume(parser_->put(upstream_read_buffer_.data(), ec));
    if (ec && ec != http::error::need_more) {
      OnUpstreamError(ec);
      return;
    }
    if (parser_->is_header_done()) {
      OnResponseHeader();
      return;
    }
  }
  const std::size_t size = beast::read_size(upstream_read_buffer_, kResponseReadSize);
  if (size == 0) {
    OnUpstreamError(http::error::buffer_overflow);
    return;
  }
  StartUpstreamTimeout();
  stream_->untimed().async_read_some(
      upstream_read_buffer_.prepare(size),
      [self = shared_from_this()](error_code ec, std::size_t bytes) {
        self->EndUpstreamTimeout(ec);
        if (ec == boost::asio::error::eof) {
          ec = {};
          if (self->parser_->got_some()) {
            self->parser_->put_eof(ec);
          } else {
            ec = http::error::end_of_stream;
          }
          if (!ec) ec = http::error::partial_message;  // no header can end at EOF
        }
        if (ec) {
          self->OnUpstreamError(ec);
          return;
        }
        self->upstream_read_buffer_.commit(bytes);
        self->ParseResponseHeader();
      });
}

void ForwardExchange::OnResponseHeader() {
  const auto& response = parser_->get();
  const unsigned status = response.result_int();
  if (status >= 100 && status < 200) {
    // Interim responses are the backend's business with us; the client gets the final one.
    // 101 would switch protocols, which cannot happen on a request without Upgrade.
    if (status == 101 || ++interim_responses_ > kMaxInterimResponses) {
      Finish(Failure::kUpstreamProtocol, http::error::bad_status,
             Problem{502, "upstream-protocol-error", "Bad Gateway",
                     "backend sent an unexpected interim response " + std::to_string(status)});
      return;
    }
    ReadResponseHeader();
    return;
  }

  choice_.OnResponse(status);
  outcome_.upstream_time = std::chrono::steady_clock::now() - upstream_start_;
  upstream_time_taken_ = true;
  outcome_.upstream_status = status;
  outcome_.status = status;
  if (auto etag = response.find(http::field::etag); etag != response.end()) {
    outcome_.etag = std::string(etag->value());
  }

  // The client gets the backend's header itself, moved out of the parser rather than copied
  // field by field (one allocation each). The parser reads the body on from its own state,
  // not from the header.
  downstream_header_ = std::move(parser_->get().base());
  downstream_header_.version(11);
  // Content-Length survives (it is end-to-end); without it the gateway picks the framing.
  StripHopByHopFields(downstream_header_);

  if (parser_->is_done()) {
    WriteResponse(0, true);
  } else {
    ReadResponseBodyChunk();
  }
}

void ForwardExchange::ReadResponseBodyChunk() {
  // The response's buffer is not reserved in the relay budget: it is taken once the backend
  // answers, at the backend's pace, and the request (and any body) has already gone upstream.
  if (!relay_buffer_) relay_buffer_ = buffers_->Take();
  auto& body = parser_->get().body();
  body.data = relay_buffer_.get();
  body.size = relay_buffer_size_;
  if (upstream_read_buffer_.size() > 0 && ParseBufferedBody()) return;
  StartUpstreamTimeout();
  http::async_read(stream_->untimed(), upstream_read_buffer_, *parser_,
                   [self = shared_from_this()](error_code ec, std::size_t) {
                     self->EndUpstreamTimeout(ec);
                     // need_buffer: the relay buffer is full, which is the normal case.
                     if (ec == http::error::need_buffer) {
                       ec = {};
                     }
                     if (ec) {
                       self->OnUpstreamError(ec);
                       return;
                     }
                     const std::size_t bytes =
                         self->relay_buffer_size_ - self->parser_->get().body().size;
                     const bool last = self->parser_->is_done();
                     if (bytes == 0 && !last) {
                       // Only framing was parsed; an empty write could end a chunked response.
                       self->ReadResponseBodyChunk();
                       return;
                     }
                     self->WriteResponse(bytes, last);
                   });
}

bool ForwardExchange::ParseBufferedBody() {
  // Body bytes that came in with the header (a small response arrives whole) are parsed here
  // rather than by Beast's composed read, which costs a posted completion and its operation
  // even when it reads nothing.
  error_code ec;
  while (upstream_read_buffer_.size() > 0 && !parser_->is_done()) {
    const std::size_t used = parser_->put(upstream_read_buffer_.data(), ec);
    upstream_read_buffer_.consume(used);
    // need_more: the rest is still to come; need_buffer: the relay buffer is full.
    if (ec == http::error::need_more || ec == http::error::need_buffer) break;
    if (ec) {
      OnUpstreamError(ec);
      return true;
    }
    if (used == 0) break;
  }
  const std::size_t bytes = relay_buffer_size_ - parser_->get().body().size;
  const bool last = parser_->is_done();
  if (bytes == 0 && !last) return false;  // framing at most: read on
  WriteResponse(bytes, last);
  return true;
}

void ForwardExchange::WriteResponse(std::size_t bytes, bool last) {
  auto on_written = [self = shared_from_this(), bytes, last](error_code ec) {
    self->OnResponseWritten(ec, bytes, last);
  };
  const boost::asio::const_buffer chunk(relay_buffer_.get(), bytes);
  bool written_now;
  if (!outcome_.response_started) {
    outcome_.response_started = true;
    written_now = downstream_.WriteResponseNowOrLater(std::move(downstream_header_), chunk, last,
                                                      std::move(on_written));
  } else {
    written_now = downstream_.WriteBodyNowOrLater(chunk, last, std::move(on_written));
  }
  if (written_now) OnResponseWritten({}, bytes, last);
}

void ForwardExchange::OnResponseWritten(error_code ec, std::size_t bytes, bool last) {
  if (ec) {
    FailClient(ec);
    return;
  }
  outcome_.response_body_bytes += bytes;
  if (last) {
    Complete();
  } else {
    ReadResponseBodyChunk();
  }
}

void ForwardExchange::Complete() {
  outcome_.response_complete = true;
  const bool reusable = request_sent_ && parser_->keep_alive() && upstream_request_.keep_alive() &&
                        upstream_read_buffer_.size() == 0;
  if (reusable) {
    choice_.Give(std::move(stream_));
  }
  Finish(Failure::kNone, {}, std::nullopt);
}

bool ForwardExchange::MayRetry(error_code ec) const {
  // Only when the backend cannot have acted on the request: a reused connection the backend
  // had already given up on, a request without side effects and without a body, and not a
  // single response byte. A slow backend (timeout) is not retried: it has the request.
  return reused_connection_ && !retried_ && Resendable() && ec != beast::error::timeout &&
         !outcome_.response_started && !(parser_ && parser_->got_some());
}

void ForwardExchange::OnUpstreamError(error_code ec) {
  if (MayRetry(ec)) {
    retried_ = true;
    CloseUpstream();
    parser_.reset();
    upstream_read_buffer_.clear();
    interim_responses_ = 0;
    Connect();
    return;
  }
  const std::string backend(choice_.server_url());
  if (ec == beast::error::timeout) {
    Finish(Failure::kUpstreamTimeout, ec,
           Problem{504, "upstream-timeout", "Gateway Timeout",
                   "backend " + backend + " did not answer in time"});
    return;
  }
  Finish(Failure::kUpstreamProtocol, ec,
         Problem{502, "upstream-protocol-error", "Bad Gateway",
                 "exchange with backend " + backend + " failed: " + ec.message()});
}

void ForwardExchange::FailClient(error_code ec) { Finish(Failure::kClient, ec, std::nullopt); }

void ForwardExchange::Finish(Failure failure, error_code ec, std::optional<Problem> problem) {
  finished_ = true;
  CloseUpstream();
  if (!upstream_time_taken_ && !outcome_.upstream_server.empty()) {
    outcome_.upstream_time = std::chrono::steady_clock::now() - upstream_start_;
  }
  // The request is no longer in flight at its server once the exchange ends, whoever still
  // holds the exchange.
  choice_.End();
  outcome_.failure = failure;
  outcome_.error = ec;
  // Once response bytes went to the client a problem can no longer be sent; the failure alone
  // tells the gateway to close the client connection.
  if (!outcome_.response_started) {
    outcome_.problem = std::move(problem);
  }
  auto done = std::move(done_);
  done(std::move(outcome_));
}

void ForwardExchange::CloseUpstream() {
  upstream_timeout_.End();
  if (stream_) {
    error_code ignored;
    stream_->socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
    stream_->close();
    stream_.reset();
  }
}

}  // namespace fencegate::adapters
