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

namespace fencegate::lockstore::etcd {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

// When every member failed in a row, wait this long before the next round so that a cluster
// electing a leader is not hammered with requests.
constexpr auto kRoundPause = std::chrono::milliseconds(50);
// An answer larger than this is not etcd's (fence records and ownership keys are small).
constexpr std::uint64_t kMaxAnswerBytes = 16u << 20;

// etcd's JSON renders int64 as strings and omits zero values.
std::int64_t Int(const json::object& object, std::string_view name) {
  const json::value* value = object.if_contains(name);
  if (value == nullptr) return 0;
  if (value->is_string()) {
    try {
      return std::stoll(std::string(value->as_string()));
    } catch (const std::exception&) {
      return 0;
    }
  }
  if (value->is_int64()) return value->as_int64();
  if (value->is_uint64()) return static_cast<std::int64_t>(value->as_uint64());
  return 0;
}

std::string Str(const json::object& object, std::string_view name) {
  const json::value* value = object.if_contains(name);
  return value != nullptr && value->is_string() ? std::string(value->as_string()) : std::string();
}

bool DecodeKv(const json::value& value, EtcdKeyValue* out) {
  if (!value.is_object()) return false;
  const json::object& kv = value.as_object();
  auto key = encoding::Base64Decode(Str(kv, "key"));
  auto bytes = encoding::Base64Decode(Str(kv, "value"));
  if (!key || !bytes) return false;
  out->key = std::move(*key);
  out->value = std::move(*bytes);
  out->create_revision = Int(kv, "create_revision");
  out->mod_revision = Int(kv, "mod_revision");
  out->lease = Int(kv, "lease");
  return true;
}

Status DecodeKvs(const json::object& range, std::vector<EtcdKeyValue>* out) {
  const json::value* kvs = range.if_contains("kvs");
  if (kvs == nullptr) return Status::Ok();
  if (!kvs->is_array()) return Status::Corruption("etcd range: kvs is not an array");
  for (const json::value& item : kvs->as_array()) {
    EtcdKeyValue kv;
    if (!DecodeKv(item, &kv)) return Status::Corruption("etcd range: undecodable key-value");
    out->push_back(std::move(kv));
  }
  return Status::Ok();
}

// The end of the range of keys that start with `prefix` (etcd's "range_end").
std::string PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    if (static_cast<unsigned char>(end.back()) < 0xff) {
      end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // every key
}

const char* TargetName(EtcdCompare::Target target) {
  switch (target) {
    case EtcdCompare::Target::kValue:
      return "VALUE";
    case EtcdCompare::Target::kCreateRevision:
      return "CREATE";
    case EtcdCompare::Target::kModRevision:
      return "MOD";
    case EtcdCompare::Target::kLease:
      return "LEASE";
  }
  return "VALUE";
}

const char* ResultName(EtcdCompare::Result result) {
  switch (result) {
    case EtcdCompare::Result::kEqual:
      return "EQUAL";
    case EtcdCompare::Result::kNotEqual:
      return "NOT_EQUAL";
    case EtcdCompare::Result::kLess:
      return "LESS";
    case EtcdCompare::Result::kGreater:
      return "GREATER";
  }
  return "EQUAL";
}

json::object CompareJson(const EtcdCompare& compare) {
  json::object out{{"key", encoding::Base64Encode(compare.key)},
                   {"target", TargetName(compare.target)},
                   {"result", ResultName(compare.result)}};
  const std::string number = std::to_string(compare.number);
  switch (compare.target) {
    case EtcdCompare::Target::kValue:
      out["value"] = encoding::Base64Encode(compare.value);
      break;
    case EtcdCompare::Target::kCreateRevision:
      out["create_revision"] = number;
      break;
    case EtcdCompare::Target::kModRevision:
      out["mod_revision"] = number;
      break;
    case EtcdCompare::Target::kLease:
      out["lease"] = number;
      break;
  }
  return out;
}

json::object OpJson(const EtcdOp& op) {
  switch (op.kind) {
    case EtcdOp::Kind::kPut: {
      json::object put{{"key", encoding::Base64Encode(op.key)},
                       {"value", encoding::Base64Encode(op.value)}};
      if (op.lease != 0) put["lease"] = std::to_string(op.lease);
      return {{"request_put", std::move(put)}};
    }
    case EtcdOp::Kind::kDelete:
      return {{"request_delete_range", json::object{{"key", encoding::Base64Encode(op.key)}}}};
    case EtcdOp::Kind::kRange:
      break;
  }
  return {{"request_range", json::object{{"key", encoding::Base64Encode(op.key)}}}};
}

// The outcome of one attempt on one member.
struct Attempt {
  Status status;
  bool retryable = false;  // another member may answer differently
  bool sent = false;       // the request may have reached the member
};

}  // namespace

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
      const Attempt attempt = Once(path, text, end, out);
      if (attempt.status.ok() || !attempt.retryable) return attempt.status;
      counters_->errors.fetch_add(1, std::memory_order_relaxed);
      Failover();
      if (attempt.sent && !idempotent) {
        return Status::Unavailable("etcd: outcome unknown, not retried: " +
                                   attempt.status.message());
      }
      if (++failed_in_a_row % options_.endpoints.size() == 0) {
        std::this_thread::sleep_for(kRoundPause);
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
    tls_client::PrepareClientHandshake(*options_.tls, Host(endpoint), tls_stream_->native_handle());
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

  Attempt Once(std::string_view path, const std::string& body, Clock::time_point end,
               json::object* out) {
    Attempt attempt;
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
      if (!Resolve(endpoint, &address)) {
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
    parser.body_limit(kMaxAnswerBytes);
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
    return Decode(endpoint, response, out);
  }

  static Attempt Decode(const std::string& endpoint,
                        const http::response<http::string_body>& response, json::object* out) {
    Attempt attempt;
    attempt.sent = true;
    boost::system::error_code parse_error;
    // Streaming endpoints (lease keepalive) answer {"result": {...}} per message, one per line.
    std::string_view text = response.body();
    if (const auto newline = text.find('\n'); newline != std::string_view::npos) {
      text = text.substr(0, newline);
    }
    json::value value = json::parse(text, parse_error);
    const unsigned status = response.result_int();
    if (status != 200) {
      const std::string message =
          !parse_error && value.is_object() ? Str(value.as_object(), "error") : "";
      const std::string what = "etcd " + endpoint + ": HTTP " + std::to_string(status) + " " +
                               (message.empty() ? std::string(text.substr(0, 200)) : message);
      attempt.status = status == 404   ? Status::NotFound(what)
                       : status >= 500 ? Status::Unavailable(what)
                                       : Status::InvalidArgument(what);
      attempt.retryable = status >= 500;
      return attempt;
    }
    if (parse_error || !value.is_object()) {
      attempt.status = Status::Corruption("etcd " + endpoint + ": answer is not a JSON object");
      return attempt;
    }
    json::object& object = value.as_object();
    if (json::value* result = object.if_contains("result"); result != nullptr) {
      if (!result->is_object()) {
        attempt.status = Status::Corruption("etcd " + endpoint + ": bad stream message");
        return attempt;
      }
      *out = std::move(result->as_object());
    } else if (json::value* error = object.if_contains("error"); error != nullptr) {
      attempt.status = Status::Unavailable("etcd " + endpoint + ": " + json::serialize(*error));
      attempt.retryable = true;
    } else {
      *out = std::move(object);
    }
    return attempt;
  }

  // "host" of "host:port", without an IPv6 address's brackets.
  static std::string Host(const std::string& endpoint) {
    std::string host = endpoint.substr(0, endpoint.rfind(':'));
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    return host;
  }

  static bool Resolve(const std::string& endpoint, tcp::endpoint* out) {
    const auto colon = endpoint.rfind(':');
    if (colon == std::string::npos) return false;
    std::string host = Host(endpoint);
    if (host == "localhost") host = "127.0.0.1";
    boost::system::error_code ec;
    const auto address = net::ip::make_address(host, ec);
    if (ec) return false;
    unsigned port = 0;
    const std::string digits = endpoint.substr(colon + 1);
    if (digits.empty() || digits.size() > 5 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return false;
    }
    port = static_cast<unsigned>(std::stoul(digits));
    if (port == 0 || port > 65535) return false;
    *out = tcp::endpoint(address, static_cast<unsigned short>(port));
    return true;
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
  Status status =
      impl_->Call("/v3/kv/range", {{"key", encoding::Base64Encode(key)}}, true, &answer);
  if (!status.ok()) return status;
  std::vector<EtcdKeyValue> kvs;
  status = DecodeKvs(answer, &kvs);
  if (!status.ok()) return status;
  out->reset();
  if (!kvs.empty()) *out = std::move(kvs.front());
  return Status::Ok();
}

Status EtcdClient::GetPrefix(std::string_view prefix, std::vector<EtcdKeyValue>* out) {
  json::object answer;
  Status status = impl_->Call("/v3/kv/range",
                              {{"key", encoding::Base64Encode(prefix)},
                               {"range_end", encoding::Base64Encode(PrefixEnd(prefix))}},
                              true, &answer);
  if (!status.ok()) return status;
  out->clear();
  return DecodeKvs(answer, out);
}

Status EtcdClient::GetPrefixPage(std::string_view prefix, std::string_view from, std::size_t limit,
                                 std::vector<EtcdKeyValue>* out, bool* more) {
  json::object answer;
  Status status = impl_->Call("/v3/kv/range",
                              {{"key", encoding::Base64Encode(from < prefix ? prefix : from)},
                               {"range_end", encoding::Base64Encode(PrefixEnd(prefix))},
                               {"limit", static_cast<std::int64_t>(limit)}},
                              true, &answer);
  if (!status.ok()) return status;
  out->clear();
  const json::value* has_more = answer.if_contains("more");
  *more = has_more != nullptr && has_more->is_bool() && has_more->as_bool();
  return DecodeKvs(answer, out);
}

Status EtcdClient::AnyWithPrefix(std::string_view prefix, bool* found) {
  json::object answer;
  Status status = impl_->Call("/v3/kv/range",
                              {{"key", encoding::Base64Encode(prefix)},
                               {"range_end", encoding::Base64Encode(PrefixEnd(prefix))},
                               {"limit", 1},
                               {"keys_only", true}},
                              true, &answer);
  if (!status.ok()) return status;
  std::vector<EtcdKeyValue> kvs;
  if (Status decoded = DecodeKvs(answer, &kvs); !decoded.ok()) return decoded;
  *found = !kvs.empty();
  return Status::Ok();
}

Status EtcdClient::Txn(const std::vector<EtcdCompare>& compares, const std::vector<EtcdOp>& success,
                       const std::vector<EtcdOp>& failure, bool idempotent, EtcdTxnResult* out) {
  json::array compare_json, success_json, failure_json;
  for (const EtcdCompare& compare : compares) compare_json.push_back(CompareJson(compare));
  for (const EtcdOp& op : success) success_json.push_back(OpJson(op));
  for (const EtcdOp& op : failure) failure_json.push_back(OpJson(op));
  json::object answer;
  Status status = impl_->Call("/v3/kv/txn",
                              {{"compare", std::move(compare_json)},
                               {"success", std::move(success_json)},
                               {"failure", std::move(failure_json)}},
                              idempotent, &answer);
  if (!status.ok()) return status;
  *out = EtcdTxnResult{};
  // A failed transaction omits "succeeded" (false is JSON's default value here).
  if (const json::value* succeeded = answer.if_contains("succeeded")) {
    out->succeeded = succeeded->is_bool() && succeeded->as_bool();
  }
  if (const json::value* header = answer.if_contains("header"); header && header->is_object()) {
    out->revision = Int(header->as_object(), "revision");
  }
  if (const json::value* responses = answer.if_contains("responses");
      responses != nullptr && responses->is_array()) {
    for (const json::value& response : responses->as_array()) {
      if (!response.is_object()) continue;
      const json::value* range = response.as_object().if_contains("response_range");
      if (range == nullptr || !range->is_object()) continue;
      std::vector<EtcdKeyValue> kvs;
      status = DecodeKvs(range->as_object(), &kvs);
      if (!status.ok()) return status;
      out->ranges.emplace_back();
      if (!kvs.empty()) out->ranges.back() = std::move(kvs.front());
    }
  }
  return Status::Ok();
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
  *id = Int(answer, "ID");
  if (*id == 0) return Status::Unavailable("etcd: lease grant answered without an ID");
  return Status::Ok();
}

Status EtcdClient::LeaseKeepAlive(std::int64_t id, std::int64_t* ttl_seconds) {
  json::object answer;
  const Status status =
      impl_->Call("/v3/lease/keepalive", {{"ID", std::to_string(id)}}, true, &answer);
  if (!status.ok()) return status;
  *ttl_seconds = Int(answer, "TTL");
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
  *ttl_seconds = Int(answer, "TTL");
  return Status::Ok();
}

const std::string& EtcdClient::current_endpoint() const { return impl_->current_endpoint(); }

}  // namespace fencegate::lockstore::etcd
