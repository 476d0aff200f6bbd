#include "lockstore/etcd/etcd_client.h"

#include <algorithm>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/json.hpp>

#include "base/encoding/base64.h"
#include "lockstore/etcd/etcd_json.h"

namespace fencegate::lockstore::etcd {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

class EtcdClient::Impl {
 public:
  Impl(EtcdClientOptions options, std::shared_ptr<EtcdClientCounters> counters)
      : options_(std::move(options)), counters_(std::move(counters)) {
    if (options_.endpoints.empty()) options_.endpoints.push_back("127.0.0.1:2379");
  }

  // POSTs `body` to `path` until a member answers, the answer is definitive, or the operation
  // runs out of time.
  Status Call(std::string_view path, const json::object& body, bool idempotent, json::object* out) {
    const std::string text = json::serialize(body);
    const Clock::time_point end = Clock::now() + options_.operation_timeout;
    std::size_t failed_in_a_row = 0;
    for (;;) {
      const EtcdAttempt attempt = Once(path, text, end, out);
      if (attempt.status.ok() || !attempt.retryable) return attempt.status;
      counters_->errors.fetch_add(1, std::memory_order_relaxed);
      Failover();
      if (attempt.sent && !idempotent) {
        return Status::Unavailable("etcd: outcome unknown, not retried: " +
                                   attempt.status.message());
      }
      if (++failed_in_a_row % options_.endpoints.size() == 0) {
        std::this_thread::sleep_for(kEtcdRoundPause);
      }
      if (Clock::now() >= end) {
        return Status::Unavailable("etcd: no member answered within the operation timeout (" +
                                   attempt.status.message() + ")");
      }
    }
  }

  const std::string& current_endpoint() const { return options_.endpoints[current_]; }

 private:
  void Failover() {
    Close();
    current_ = (current_ + 1) % options_.endpoints.size();
    counters_->failovers.fetch_add(1, std::memory_order_relaxed);
  }

  // No TLS close_notify: the connection is dropped after a failure or a "close" answer, and
  // etcd does not need it.
  void Close() {
    if (connected()) {
      beast::error_code ignored;
      Lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
      Lowest().close();
      stream_.reset();
      tls_stream_.reset();
    }
    buffer_.clear();
  }

  bool connected() const { return stream_.has_value() || tls_stream_.has_value(); }
  beast::tcp_stream& Lowest() { return tls_stream_ ? tls_stream_->next_layer() : *stream_; }

  // The HTTP layer: TLS over the TCP stream when the store is configured for it.
  template <class Operation>
  void WithStream(Operation operation) {
    if (tls_stream_) {
      operation(*tls_stream_);
    } else {
      operation(*stream_);
    }
  }

  // The certificate must chain to the configured CA and name the member (unless turned off); a
  // refusal is counted and the attempt fails over like a refused connection, never to plain.
  bool Handshake(const std::string& endpoint, beast::error_code* ec) {
    tls_client::PrepareClientHandshake(*options_.tls, EtcdEndpointHost(endpoint),
                                       tls_stream_->native_handle());
    tls_stream_->async_handshake(net::ssl::stream_base::client,
                                 [ec](beast::error_code e) { *ec = e; });
    Run();
    if (*ec) counters_->tls_failures.fetch_add(1, std::memory_order_relaxed);
    return !*ec;
  }

  // Runs the io_context until the started operation completes (the stream's timer bounds it).
  void Run() {
    ioc_.restart();
    ioc_.run();
  }

  EtcdAttempt Once(std::string_view path, const std::string& body, Clock::time_point end,
                   json::object* out) {
    EtcdAttempt attempt;
    const Clock::time_point deadline = std::min(end, Clock::now() + options_.request_timeout);
    const auto remaining = [&] {
      return std::max(
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()),
          std::chrono::milliseconds(1));
    };
    const std::string& endpoint = current_endpoint();
    beast::error_code ec;
    if (!connected()) {
      tcp::endpoint address;
      if (!ParseEtcdEndpoint(endpoint, &address)) {
        attempt.status = Status::InvalidArgument("etcd: bad endpoint '" + endpoint + "'");
        attempt.retryable = options_.endpoints.size() > 1;
        return attempt;
      }
      if (options_.tls_context) {
        tls_stream_.emplace(ioc_, *options_.tls_context);
      } else {
        stream_.emplace(ioc_);
      }
      Lowest().expires_after(remaining());
      Lowest().async_connect(address, [&ec](beast::error_code e) { ec = e; });
      Run();
      if (ec) {
        attempt.status = Status::Unavailable("etcd " + endpoint + ": connect: " + ec.message());
        attempt.retryable = true;
        return attempt;
      }
      if (options_.tls_context && !Handshake(endpoint, &ec)) {
        Close();
        attempt.status =
            Status::Unavailable("etcd " + endpoint + ": TLS handshake: " + ec.message());
        attempt.retryable = true;
        return attempt;
      }
    }
    http::request<http::string_body> request{http::verb::post, std::string(path), 11};
    request.set(http::field::host, endpoint);
    request.set(http::field::content_type, "application/json");
    request.keep_alive(true);
    request.body() = body;
    request.prepare_payload();
    attempt.sent = true;
    Lowest().expires_after(remaining());
    WithStream([&](auto& stream) {
      http::async_write(stream, request, [&ec](beast::error_code e, std::size_t) { ec = e; });
    });
    Run();
    http::response_parser<http::string_body> parser;
    parser.body_limit(kEtcdMaxAnswerBytes);
    if (!ec) {
      Lowest().expires_after(remaining());
      WithStream([&](auto& stream) {
        http::async_read(stream, buffer_, parser,
                         [&ec](beast::error_code e, std::size_t) { ec = e; });
      });
      Run();
    }
    if (ec) {
      Close();
      attempt.status = Status::Unavailable("etcd " + endpoint + ": " + ec.message());
      attempt.retryable = true;
      return attempt;
    }
    counters_->round_trips.fetch_add(1, std::memory_order_relaxed);
    http::response<http::string_body> response = parser.release();
    if (!response.keep_alive()) Close();
    const EtcdAnswer answer =
        DecodeEtcdAnswer(endpoint, response.result_int(), response.body(), out);
    attempt.status = answer.status;
    attempt.retryable = answer.retryable;
    attempt.sent = true;
    return attempt;
  }

  EtcdClientOptions options_;
  std::shared_ptr<EtcdClientCounters> counters_;
  net::io_context ioc_{1};
  // One of the two while connected: plain, or TLS when the store is configured for it.
  std::optional<beast::tcp_stream> stream_;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls_stream_;
  beast::flat_buffer buffer_;
  std::size_t current_ = 0;
};

EtcdClient::EtcdClient(EtcdClientOptions options, std::shared_ptr<EtcdClientCounters> counters)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(counters))) {}
EtcdClient::~EtcdClient() = default;

Status EtcdClient::Get(std::string_view key, std::optional<EtcdKeyValue>* out) {
  json::object answer;
  Status status = impl_->Call("/v3/kv/range", EtcdRangeRequest(key), true, &answer);
  if (!status.ok()) return status;
  std::vector<EtcdKeyValue> kvs;
  status = DecodeEtcdKvs(answer, &kvs);
  if (!status.ok()) return status;
  out->reset();
  if (!kvs.empty()) *out = std::move(kvs.front());
  return Status::Ok();
}

Status EtcdClient::GetPrefix(std::string_view prefix, std::vector<EtcdKeyValue>* out) {
  json::object answer;
  Status status = impl_->Call("/v3/kv/range",
                              {{"key", encoding::Base64Encode(prefix)},
                               {"range_end", encoding::Base64Encode(EtcdPrefixEnd(prefix))}},
                              true, &answer);
  if (!status.ok()) return status;
  out->clear();
  return DecodeEtcdKvs(answer, out);
}

Status EtcdClient::GetPrefixPage(std::string_view prefix, std::string_view from, std::size_t limit,
                                 std::vector<EtcdKeyValue>* out, bool* more) {
  json::object answer;
  Status status = impl_->Call("/v3/kv/range",
                              {{"key", encoding::Base64Encode(from < prefix ? prefix : from)},
                               {"range_end", encoding::Base64Encode(EtcdPrefixEnd(prefix))},
                               {"limit", static_cast<std::int64_t>(limit)}},
                              true, &answer);
  if (!status.ok()) return status;
  out->clear();
  const json::value* has_more = answer.if_contains("more");
  *more = has_more != nullptr && has_more->is_bool() && has_more->as_bool();
  return DecodeEtcdKvs(answer, out);
}

Status EtcdClient::AnyWithPrefix(std::string_view prefix, bool* found) {
  json::object answer;
  Status status = impl_->Call("/v3/kv/range",
                              {{"key", encoding::Base64Encode(prefix)},
                               {"range_end", encoding::Base64Encode(EtcdPrefixEnd(prefix))},
                               {"limit", 1},
                               {"keys_only", true}},
                              true, &answer);
  if (!status.ok()) return status;
  std::vector<EtcdKeyValue> kvs;
  if (Status decoded = DecodeEtcdKvs(answer, &kvs); !decoded.ok()) return decoded;
  *found = !kvs.empty();
  return Status::Ok();
}

Status EtcdClient::Txn(const std::vector<EtcdCompare>& compares, const std::vector<EtcdOp>& success,
                       const std::vector<EtcdOp>& failure, bool idempotent, EtcdTxnResult* out) {
  json::object answer;
  const Status status =
      impl_->Call("/v3/kv/txn", EtcdTxnRequest(compares, success, failure), idempotent, &answer);
  if (!status.ok()) return status;
  return DecodeEtcdTxn(answer, out);
}

Status EtcdClient::Put(std::string_view key, std::string_view value, std::int64_t lease) {
  json::object request{{"key", encoding::Base64Encode(key)},
                       {"value", encoding::Base64Encode(value)}};
  if (lease != 0) request["lease"] = std::to_string(lease);
  json::object answer;
  return impl_->Call("/v3/kv/put", request, true, &answer);
}

Status EtcdClient::Delete(std::string_view key) {
  json::object answer;
  return impl_->Call("/v3/kv/deleterange", {{"key", encoding::Base64Encode(key)}}, true, &answer);
}

Status EtcdClient::LeaseGrant(std::int64_t ttl_seconds, std::int64_t* id) {
  json::object answer;
  // Not idempotent: a retry after an unknown outcome could leave an extra lease (it would
  // expire unused, but the caller should decide).
  const Status status =
      impl_->Call("/v3/lease/grant", {{"TTL", std::to_string(ttl_seconds)}}, false, &answer);
  if (!status.ok()) return status;
  *id = EtcdJsonInt(answer, "ID");
  if (*id == 0) return Status::Unavailable("etcd: lease grant answered without an ID");
  return Status::Ok();
}

Status EtcdClient::LeaseKeepAlive(std::int64_t id, std::int64_t* ttl_seconds) {
  json::object answer;
  const Status status =
      impl_->Call("/v3/lease/keepalive", {{"ID", std::to_string(id)}}, true, &answer);
  if (!status.ok()) return status;
  *ttl_seconds = EtcdJsonInt(answer, "TTL");
  return Status::Ok();
}

Status EtcdClient::LeaseRevoke(std::int64_t id) {
  json::object answer;
  return impl_->Call("/v3/lease/revoke", {{"ID", std::to_string(id)}}, true, &answer);
}

void EtcdClient::RevokeOrLetExpire(std::int64_t id) {
  LeaseRevoke(id).IgnoreError();  // the TTL ends it (see the header)
}

Status EtcdClient::LeaseTimeToLive(std::int64_t id, std::int64_t* ttl_seconds) {
  json::object answer;
  const Status status =
      impl_->Call("/v3/lease/timetolive", {{"ID", std::to_string(id)}}, true, &answer);
  if (!status.ok()) return status;
  *ttl_seconds = EtcdJsonInt(answer, "TTL");
  return Status::Ok();
}

const std::string& EtcdClient::current_endpoint() const { return impl_->current_endpoint(); }

}  // namespace fencegate::lockstore::etcd
