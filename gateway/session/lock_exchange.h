#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/beast/http/verb.hpp>

#include "base/net/http_header.h"
#include "gateway/http/refusal.h"
#include "gateway/locks/lock_api.h"
#include "resource_adapters/adapter.h"

namespace fencegate::gateway {

// One request of the built-in lock API on a client connection: reads its small JSON body
// through the connection's Downstream, hands it to the LockApi, keeps a long-poll acquire's
// place in the queue until the answer comes or the client goes away, and decides the answer's
// header. The connection keeps what is socket work: noticing that the client hung up, the hop
// back to its own thread, and writing the answer. Reset by Begin for every request; the body
// buffer keeps its capacity.
class LockExchange {
 public:
  // A lock request body carries a few small JSON fields.
  static constexpr std::size_t kMaxBody = 4096;

  // The connection the exchange belongs to. Exactly one of OnLockAnswer, OnLockBodyRefused and
  // OnLockBodyLost ends each exchange.
  class Client {
   public:
    // A long-poll acquire waits in the lock service's queue: watch the connection and call
    // ClientGone() if the client hangs up, or the lock would go to nobody for a whole TTL.
    virtual void OnLockQueued() = 0;
    // The lock API's answer. From any thread (the lock service's), possibly inside Begin or
    // ClientGone: hop to the connection's thread, then call Finish.
    virtual void OnLockAnswer(LockHttpResponse response) = 0;
    // The body is larger than kMaxBody; the lock service was not asked.
    virtual void OnLockBodyRefused(Refusal refusal, std::string_view detail) = 0;
    // The body read failed (the client broke framing or went away): nobody to answer, and the
    // connection cannot be used again.
    virtual void OnLockBodyLost() = 0;

   protected:
    ~Client() = default;
  };

  // The views stay valid until the exchange ends (the request's own strings).
  struct Request {
    boost::beast::http::verb method = boost::beast::http::verb::unknown;
    std::string_view path;  // the target without its query, under the LockApi's prefix
    std::string_view request_id;
    std::optional<std::uint64_t> content_length;
  };

  LockExchange(Client& client, adapters::Downstream& downstream)
      : client_(client), downstream_(downstream) {}
  LockExchange(const LockExchange&) = delete;
  LockExchange& operator=(const LockExchange&) = delete;

  // Starts one request. A Content-Length over kMaxBody is refused at once, without a read.
  void Begin(LockApi& api, const Request& request);

  // A long-poll acquire is queued and its answer not yet finished (OnLockQueued was called).
  bool queued() const { return handed_over_ && wait_.waiter != 0; }

  // The client went away: withdraws a queued long poll from the lock service, whose answer
  // (lock-wait-cancelled) still comes through OnLockAnswer. No effect otherwise.
  void ClientGone();

  // On the connection's thread, with the answer OnLockAnswer gave: ends the exchange and sets
  // `header`'s status, Content-Type, Content-Length (of response.body), Retry-After and, on a
  // 405, the Allow of the resource. `header` is expected fresh.
  void Finish(const LockHttpResponse& response, adapters::ResponseHeader& header);

 private:
  void ReadBody();
  void OnBodyRead(boost::system::error_code ec, std::size_t offset, std::size_t bytes, bool done);
  void HandOver();

  Client& client_;
  adapters::Downstream& downstream_;
  LockApi* api_ = nullptr;
  Request request_;
  std::string body_;
  LockApi::Wait wait_;
  bool handed_over_ = false;  // given to the LockApi, answer not finished
};

}  // namespace fencegate::gateway
