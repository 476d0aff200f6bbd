#include "resource_adapters/s3/s3_upstream.h"

#include <string>
#include <utility>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/stream_base.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

namespace fencegate::adapters::s3 {

namespace asio = boost::asio;
namespace beast = boost::beast;
using boost::system::error_code;

std::string HostHeader(std::string_view host, std::uint16_t port, bool tls) {
  std::string out =
      host.find(':') != std::string_view::npos ? "[" + std::string(host) + "]" : std::string(host);
  if (port != (tls ? 443 : 80)) out += ":" + std::to_string(port);
  return out;
}

UpstreamCall::UpstreamCall(asio::io_context& ioc, const Endpoint& endpoint,
                           std::shared_ptr<ServerConnectionPools> pools, std::string_view fence_key)
    : endpoint_(endpoint),
      pools_(std::move(pools)),
      choice_(ioc, *pools_, endpoint.connect),
      fence_key_(fence_key) {}

UpstreamCall::~UpstreamCall() {
  // Reused only in step with the protocol: the request went out whole, the response was read to
  // its end (nothing of it left in the buffer) and the backend keeps the connection open.
  if (stream_ && request_sent_ && parser_ && parser_->is_done() && parser_->keep_alive() &&
      read_buffer_.size() == 0) {
    choice_.Give(std::move(stream_));
  }
}

asio::awaitable<error_code> UpstreamCall::Open(bool fresh) {
  if (!begun_) {
    problem_ = choice_.Begin(fence_key_);
    if (problem_) {
      connect_failed_ = problem_->type == "no-healthy-backend";
      co_return asio::error::connection_refused;
    }
    begun_ = true;
  }
  // Probed: a call does not know here whether its request may be sent twice.
  if (!fresh) stream_ = choice_.TakeIdle(UpstreamConnectionPool::Probe::kPeek);
  reused_ = stream_ != nullptr;
  if (reused_) co_return error_code{};
  // A new connection, to this server or (when it cannot be reached, nothing sent) another one.
  OpenedConnection opened =
      co_await asio::async_initiate<decltype(asio::use_awaitable), void(OpenedConnection)>(
          [this](auto handler) {
            auto shared = std::make_shared<decltype(handler)>(std::move(handler));
            choice_.Open([shared](OpenedConnection result) { (*shared)(std::move(result)); });
          },
          asio::use_awaitable);
  if (!opened.connection) {
    connect_failed_ = opened.failure == ForwardOutcome::Failure::kUpstreamConnect;
    tls_failed_ = opened.problem && opened.problem->type == "upstream-tls-failed";
    problem_ = std::move(opened.problem);
    co_return opened.error ? opened.error : asio::error::connection_refused;
  }
  stream_ = std::move(opened.connection);
  reused_ = opened.reused;
  co_return error_code{};
}

RequestHeader UpstreamCall::Signed(const RequestHeader& header) const {
  RequestHeader signed_header = header;
  signed_header.version(11);
  signed_header.set(http::field::host, endpoint_.host_headers[choice_.server()]);
  SignV4(signed_header, endpoint_.credentials, endpoint_.region, AmzDateNow(), kUnsignedPayload);
  return signed_header;
}

bool UpstreamCall::MayRetry(error_code ec, std::size_t sent, http::verb method,
                            bool has_body) const {
  const bool side_effect_free =
      (method == http::verb::get || method == http::verb::head) && !has_body;
  return reused_ && !retried_ && ec != beast::error::timeout && !(parser_ && parser_->got_some()) &&
         (sent == 0 || side_effect_free);
}

void UpstreamCall::Discard() {
  if (stream_) {
    error_code ignored;
    stream_->socket().close(ignored);
    stream_.reset();
  }
  parser_.reset();
  read_buffer_.clear();
}

asio::awaitable<error_code> UpstreamCall::ReadResponseHeader(http::verb method) {
  error_code ec;
  parser_.emplace();
  parser_->body_limit(boost::none);
  // A HEAD response announces a length but carries no body.
  parser_->skip(method == http::verb::head);
  stream_->expires_after(endpoint_.response_timeout);
  co_await http::async_read_header(*stream_, read_buffer_, *parser_,
                                   asio::redirect_error(asio::use_awaitable, ec));
  if (!ec) choice_.OnResponse(parser_->get().result_int());
  co_return ec;
}

asio::awaitable<error_code> UpstreamCall::Send(RequestHeader header, std::string_view body) {
  for (bool fresh = false;; fresh = true) {
    error_code ec = co_await Open(fresh);
    if (ec) co_return ec;
    http::request<http::buffer_body, Fields> request(Signed(header));
    request.body().data = body.empty() ? nullptr : const_cast<char*>(body.data());
    request.body().size = body.size();
    request.body().more = false;
    stream_->expires_after(endpoint_.response_timeout);
    const std::size_t sent = co_await http::async_write(
        *stream_, request, asio::redirect_error(asio::use_awaitable, ec));
    if (!ec) {
      request_sent_ = true;
      ec = co_await ReadResponseHeader(request.method());
    }
    if (!ec || !MayRetry(ec, sent, request.method(), !body.empty())) co_return ec;
    Discard();
    request_sent_ = false;
    retried_ = true;
  }
}

asio::awaitable<error_code> UpstreamCall::SendStreamed(RequestHeader header,
                                                       const BodySource& source,
                                                       std::size_t piece_size) {
  error_code ec;
  http::request<http::buffer_body, Fields> request;
  for (bool fresh = false;; fresh = true) {
    ec = co_await Open(fresh);
    if (ec) co_return ec;
    request = http::request<http::buffer_body, Fields>(Signed(header));
    request.body().data = nullptr;
    request.body().more = true;
    http::serializer<true, http::buffer_body, Fields> serializer(request);
    stream_->expires_after(endpoint_.response_timeout);
    const std::size_t sent = co_await http::async_write_header(
        *stream_, serializer, asio::redirect_error(asio::use_awaitable, ec));
    // The body is not replayable: only a header that did not go out at all is sent again.
    if (ec && MayRetry(ec, sent, request.method(), true)) {
      Discard();
      retried_ = true;
      continue;
    }
    if (ec) co_return ec;
    std::string piece(piece_size, '\0');
    bool done = false;
    while (!done) {
      std::size_t bytes = 0;
      ec = co_await source(asio::buffer(piece), &bytes, &done);
      if (ec) co_return ec;
      if (bytes == 0 && !done) continue;
      request.body().data = bytes == 0 ? nullptr : piece.data();
      request.body().size = bytes;
      request.body().more = !done;
      stream_->expires_after(endpoint_.response_timeout);
      co_await http::async_write(*stream_, serializer,
                                 asio::redirect_error(asio::use_awaitable, ec));
      // need_buffer: the piece went out and the serializer wants the next one.
      if (ec == http::error::need_buffer) ec = {};
      if (ec) co_return ec;
    }
    request_sent_ = true;
    co_return co_await ReadResponseHeader(request.method());
  }
}

asio::awaitable<error_code> UpstreamCall::ReadBody(asio::mutable_buffer buffer, std::size_t* bytes,
                                                   bool* done) {
  *bytes = 0;
  *done = parser_->is_done();
  if (*done) co_return error_code{};
  auto& body = parser_->get().body();
  body.data = buffer.data();
  body.size = buffer.size();
  error_code ec;
  stream_->expires_after(endpoint_.response_timeout);
  co_await http::async_read(*stream_, read_buffer_, *parser_,
                            asio::redirect_error(asio::use_awaitable, ec));
  // need_buffer: the buffer is full, which is the normal case for a large body.
  if (ec == http::error::need_buffer) ec = {};
  *bytes = buffer.size() - body.size;
  *done = parser_->is_done();
  co_return ec;
}

asio::awaitable<error_code> UpstreamCall::ReadWholeBody(std::string* out, std::size_t limit) {
  out->clear();
  char piece[16 * 1024];
  bool done = false;
  while (!done) {
    std::size_t bytes = 0;
    const error_code ec = co_await ReadBody(asio::buffer(piece), &bytes, &done);
    if (ec) co_return ec;
    if (out->size() < limit) out->append(piece, std::min(bytes, limit - out->size()));
  }
  co_return error_code{};
}

}  // namespace fencegate::adapters::s3
