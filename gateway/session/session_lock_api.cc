// The connection's side of a lock API request (gateway/session/lock_exchange.h does the rest):
// the session holds itself while the lock service may hold the answer, watches a long-poll
// waiter's client, hops the answer back to its thread and writes it.
#include <sys/socket.h>

#include <cerrno>

#include "gateway/server/network_thread.h"
#include "gateway/session/session.h"

namespace fencegate::gateway {
namespace net = boost::asio;
using tcp = net::ip::tcp;
using boost::system::error_code;

void Session::HandleLockRequest() {
  exchange_.outcome = "lock";
  // The lock service may keep the answer callback (which captures only `this`) while no socket
  // operation keeps this session alive: a long poll, or an answer from a store thread.
  self_hold_ = shared_from_this();
  const auto length = parser_->content_length();
  lock_exchange_.Begin(
      *context_.locks,
      {.method = parser_->get().method(),
       .path = RequestPath(),
       .request_id = exchange_.request_id,
       .content_length = length ? std::optional<std::uint64_t>(*length) : std::nullopt});
}

void Session::OnLockBodyRefused(Refusal refusal, std::string_view detail) {
  const auto self = std::move(self_hold_);
  RefuseUnreadable(refusal, detail);
}

void Session::OnLockBodyLost() {
  const auto self = std::move(self_hold_);
  exchange_.close_after = true;
  FinishRequest();
}

// A long-poll waiter whose client hung up must leave the queue, or it would be granted the
// lock and hold it, unanswered, for a whole TTL.
void Session::OnLockQueued() {
  stream_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this()](error_code ec) {
    if (ec || !self->lock_exchange_.queued()) return;
    char byte;
    const ssize_t peeked =
        ::recv(self->stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    // 0: orderly close; -1 other than EAGAIN: reset. Bytes: a pipelined request, which
    // waits its turn (the client is still there).
    if (peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
      self->exchange_.close_after = true;
      self->lock_exchange_.ClientGone();
    }
  });
}

void Session::OnLockAnswer(LockHttpResponse response) {
  // From a store, clock or fencer thread, or inline: hop back to this session's thread.
  thread_.inbox().Post(
      [this, response = std::move(response)]() mutable { RespondLock(std::move(response)); });
}

void Session::RespondLock(LockHttpResponse response) {
  const auto self = std::move(self_hold_);
  if (lock_exchange_.queued()) {
    error_code ignored;
    stream_.socket().cancel(ignored);  // the client watch
  }
  phase_ = Phase::kResponding;
  if (response.status >= 400) exchange_.outcome = "lock_refused";
  exchange_.status = response.status;
  response_.base() = adapters::ResponseHeader{};
  lock_exchange_.Finish(response, response_.base());
  problem_body_ = std::move(response.body);
  WriteOwnResponse();
}

}  // namespace fencegate::gateway
