#include "gateway/session/lock_exchange.h"

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/field.hpp>

namespace fencegate::gateway {
namespace net = boost::asio;
namespace http = boost::beast::http;
using boost::system::error_code;

namespace {

constexpr std::string_view kBodyTooLarge = "a lock request body is at most 4096 bytes";
static_assert(LockExchange::kMaxBody == 4096, "kBodyTooLarge names the limit");

}  // namespace

void LockExchange::Begin(LockApi& api, const Request& request) {
  api_ = &api;
  request_ = request;
  wait_ = {};
  handed_over_ = false;
  body_.clear();
  if (request.content_length && *request.content_length > kMaxBody) {
    client_.OnLockBodyRefused(Refusal::kBodyTooLarge, kBodyTooLarge);
    return;
  }
  if (downstream_.body_done()) {
    HandOver();
    return;
  }
  ReadBody();
}

void LockExchange::ReadBody() {
  // One byte more than allowed, so a body over the limit shows without reading all of it.
  const std::size_t offset = body_.size();
  body_.resize(kMaxBody + 1);
  downstream_.AsyncReadBody(net::buffer(body_.data() + offset, body_.size() - offset),
                            [this, offset](error_code ec, std::size_t bytes, bool done) {
                              OnBodyRead(ec, offset, bytes, done);
                            });
}

void LockExchange::OnBodyRead(error_code ec, std::size_t offset, std::size_t bytes, bool done) {
  body_.resize(offset + bytes);
  if (ec) {
    client_.OnLockBodyLost();
    return;
  }
  if (body_.size() > kMaxBody) {
    client_.OnLockBodyRefused(Refusal::kBodyTooLarge, kBodyTooLarge);
    return;
  }
  if (done) {
    HandOver();
    return;
  }
  ReadBody();
}

void LockExchange::HandOver() {
  handed_over_ = true;
  // Captures one pointer: std::function keeps it inline, so handing over allocates nothing of
  // the exchange's own.
  wait_ = api_->Handle(request_.method, request_.path, body_, request_.request_id,
                       [client = &client_](LockHttpResponse response) {
                         client->OnLockAnswer(std::move(response));
                       });
  if (queued()) client_.OnLockQueued();
}

void LockExchange::ClientGone() {
  if (queued()) api_->CancelWait(wait_);
}

void LockExchange::Finish(const LockHttpResponse& response, adapters::ResponseHeader& header) {
  handed_over_ = false;
  wait_ = {};
  header.result(response.status);
  header.set(http::field::content_type, response.content_type);
  header.set(http::field::content_length, std::to_string(response.body.size()));
  if (response.retry_after.count() > 0) {
    header.set(http::field::retry_after, std::to_string(response.retry_after.count()));
  }
  if (response.status == 405) {
    // A lock resource ({prefix}NAME) also answers GET and HEAD (its state); its actions
    // (NAME/renew, NAME/release) only POST.
    const bool action = request_.path.find('/', api_->prefix().size()) != std::string_view::npos;
    header.set(http::field::allow, action ? "POST" : "GET, HEAD, POST");
  }
}

}  // namespace fencegate::gateway
