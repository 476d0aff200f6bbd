// The lock API exchange of a Session (gateway/locks/lock_api.h maps it to HTTP): read the small
// JSON body, hand it over, watch a long-poll waiter's client, and write the answer.
#include <sys/socket.h>

#include <cerrno>

#include "gateway/server/network_thread.h"
#include "gateway/session/session.h"

namespace fencegate::gateway {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;

namespace {

// Lock API requests carry a few small JSON fields.
constexpr std::size_t kMaxLockBody = 4096;
constexpr std::string_view kLockBodyTooLarge = "a lock request body is at most 4096 bytes";

}  // namespace

void Session::HandleLockRequest() {
  exchange_.outcome = "lock";
  const auto length = parser_->content_length();
  if (length && *length > kMaxLockBody) {
    RefuseUnreadable(Refusal::kBodyTooLarge, kLockBodyTooLarge);
    return;
  }
  lock_body_.clear();
  ReadLockBody();
}

void Session::ReadLockBody() {
  if (parser_->is_done()) {
    OnLockBody();
    return;
  }
  const std::size_t offset = lock_body_.size();
  if (offset > kMaxLockBody) {
    RefuseUnreadable(Refusal::kBodyTooLarge, kLockBodyTooLarge);
    return;
  }
  lock_body_.resize(kMaxLockBody + 1);
  AsyncReadBody(net::buffer(lock_body_.data() + offset, lock_body_.size() - offset),
                [self = shared_from_this(), offset](error_code ec, std::size_t bytes, bool) {
                  self->lock_body_.resize(offset + bytes);
                  if (ec) {
                    // The client broke framing or went away: nobody to answer.
                    self->exchange_.close_after = true;
                    self->FinishRequest();
                    return;
                  }
                  self->ReadLockBody();
                });
}

void Session::OnLockBody() {
  phase_ = Phase::kAdmitting;
  self_hold_ = shared_from_this();
  lock_waiting_ = true;
  lock_wait_ = context_.locks->Handle(
      parser_->get().method(), RequestPath(), lock_body_, exchange_.request_id,
      [this](LockHttpResponse response) {
        // From a store, clock or fencer thread, or inline: hop back to this session's thread.
        thread_.inbox().Post(
            [this, response = std::move(response)]() mutable { RespondLock(std::move(response)); });
      });
  if (lock_waiting_ && lock_wait_.waiter != 0) WatchLockClient();
}

// A long-poll waiter whose client hung up must leave the queue, or it would be granted the
// lock and hold it, unanswered, for a whole TTL.
void Session::WatchLockClient() {
  stream_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this()](error_code ec) {
    if (ec || !self->lock_waiting_) return;
    char byte;
    const ssize_t peeked =
        ::recv(self->stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    // 0: orderly close; -1 other than EAGAIN: reset. Bytes: a pipelined request, which
    // waits its turn (the client is still there).
    if (peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
      self->exchange_.close_after = true;
      self->context_.locks->CancelWait(self->lock_wait_);
    }
  });
}

void Session::RespondLock(LockHttpResponse response) {
  const auto self = std::move(self_hold_);
  if (lock_waiting_ && lock_wait_.waiter != 0) {
    error_code ignored;
    stream_.socket().cancel(ignored);  // the client watch
  }
  lock_waiting_ = false;
  lock_wait_ = {};
  phase_ = Phase::kResponding;
  if (response.status >= 400) exchange_.outcome = "lock_refused";
  exchange_.status = response.status;
  problem_body_ = std::move(response.body);
  response_.base() = adapters::ResponseHeader{};
  response_.result(response.status);
  response_.set(http::field::content_type, response.content_type);
  response_.content_length(problem_body_.size());
  if (response.retry_after.count() > 0) {
    response_.set(http::field::retry_after, std::to_string(response.retry_after.count()));
  }
  if (response.status == 405) {
    response_.set(
        http::field::allow,
        RequestPath().find('/', context_.config->locks.prefix.size()) == std::string_view::npos
            ? "GET, HEAD, POST"
            : "POST");
  }
  WriteOwnResponse();
}

}  // namespace fencegate::gateway
