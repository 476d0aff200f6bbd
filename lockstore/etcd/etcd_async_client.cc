#include "lockstore/etcd/etcd_async_client.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/json.hpp>

#include "base/tls_client/client_tls.h"
#include "lockstore/etcd/etcd_json.h"

namespace fencegate::lockstore::etcd {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

Status Closed() { return Status::Unavailable("the etcd client is closed"); }

using Done = std::function<void(Status, json::object)>;

// One operation across its attempts.
struct Call {
  std::string path;
  std::string body;
  bool idempotent = false;
  Clock::time_point end;  // the operation timeout
  Done done;
  std::size_t failed_in_a_row = 0;
};

// One keep-alive connection to one member, with at most one request in flight.
struct Connection {
  explicit Connection(std::size_t member) : member(member) {}
  const std::size_t member;
  // One of the two once connecting: plain, or TLS when the client is configured for it.
  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
  bool open = false;  // connected (and through the TLS handshake)
  beast::flat_buffer buffer;
  http::request<http::string_body> request;
  std::optional<http::response_parser<http::string_body>> parser;
  std::shared_ptr<Call> call;  // the attempt in flight; null while idle
  Clock::time_point deadline;  // of the attempt in flight

  bool started() const { return plain.has_value() || tls.has_value(); }
  beast::tcp_stream& Lowest() { return tls ? tls->next_layer() : *plain; }
};

}  // namespace

// Everything but Submit(), Close() and the stats runs on the client's thread, so the pool and
// the queue need no lock.
class EtcdAsyncClient::Impl {
 public:
  Impl(EtcdClientOptions options, std::shared_ptr<EtcdClientCounters> counters,
       std::size_t connections_per_member)
      : options_(std::move(options)),
        counters_(std::move(counters)),
        pool_(std::max<std::size_t>(connections_per_member, 1)),
        sweep_(ioc_) {
    if (options_.endpoints.empty()) options_.endpoints.push_back("127.0.0.1:2379");
    members_.resize(options_.endpoints.size());
    net::post(ioc_, [this] { FindLeader(); });
    thread_ = std::thread([this] { ioc_.run(); });
  }

  ~Impl() { Close(); }

  void Submit(std::string path, std::string body, bool idempotent, Done done) {
    std::shared_ptr<Call> call =
        MakeCall(std::move(path), std::move(body), idempotent, std::move(done));
    {
      std::lock_guard lock(mu_);
      if (!closed_) {
        net::post(ioc_, [this, call] { Enqueue(call); });
        return;
      }
    }
    call->done(Closed(), {});
  }

  void Close() {
    {
      std::lock_guard lock(mu_);
      if (closed_) return;
      closed_ = true;
    }
    // Runs after every Enqueue posted before closed_ was set; the handlers it cancels, and the
    // round pauses still waiting, call their operations back Closed, then run() returns.
    net::post(ioc_, [this] { Shutdown(); });
    work_.reset();
    thread_.join();
  }

  EtcdAsyncClientStats stats() const {
    EtcdAsyncClientStats stats;
    stats.open_connections = open_connections_.load();
    stats.in_flight = in_flight_.load();
    stats.in_flight_high_water = in_flight_high_water_.load();
    stats.waiting = waiting_count_.load();
    stats.preferred_endpoint = options_.endpoints[preferred_.load()];
    stats.leaders_found = leaders_found_.load();
    return stats;
  }

 private:
  std::shared_ptr<Call> MakeCall(std::string path, std::string body, bool idempotent, Done done) {
    auto call = std::make_shared<Call>();
    call->path = std::move(path);
    call->body = std::move(body);
    call->idempotent = idempotent;
    call->end = Clock::now() + options_.operation_timeout;
    call->done = std::move(done);
    return call;
  }

  // Leader awareness: a follower's gateway forwards every request to the leader (one more hop
  // each), so the client asks a member who leads (/v3/maintenance/status) and where it listens
  // (/v3/cluster/member/list), and prefers that member when it is one of the configured
  // endpoints (addresses compared as configured; behind a relay or a proxy nothing matches and
  // the preference stays as it was). Once at the start and after each failover; two small
  // reads, answered by the member preferred at the time.
  void FindLeader() {
    if (finding_leader_ || shutting_down_ || options_.endpoints.size() < 2) return;
    finding_leader_ = true;
    Enqueue(
        MakeCall("/v3/maintenance/status", "{}", true, [this](Status status, json::object answer) {
          if (!status.ok()) {
            finding_leader_ = false;
            return;
          }
          Enqueue(MakeCall(
              "/v3/cluster/member/list", "{}", true,
              [this, leader = IdText(answer, "leader")](Status status, json::object answer) {
                finding_leader_ = false;
                if (!status.ok() || leader.empty()) return;
                if (const std::optional<std::size_t> member = LeaderEndpoint(answer, leader)) {
                  preferred_ = *member;
                  ++leaders_found_;
                  Dispatch();
                }
              }));
        }));
  }

  // etcd renders member IDs (uint64) as strings; compared as text.
  static std::string IdText(const json::object& object, std::string_view name) {
    const json::value* value = object.if_contains(name);
    if (value == nullptr) return {};
    if (value->is_string()) return std::string(value->as_string());
    if (value->is_uint64()) return std::to_string(value->as_uint64());
    if (value->is_int64()) return std::to_string(value->as_int64());
    return {};
  }

  // The configured endpoint among the leader's client URLs ("http://host:port").
  std::optional<std::size_t> LeaderEndpoint(const json::object& list, const std::string& leader) {
    const json::value* members = list.if_contains("members");
    if (members == nullptr || !members->is_array()) return std::nullopt;
    for (const json::value& member : members->as_array()) {
      if (!member.is_object() || IdText(member.as_object(), "ID") != leader) continue;
      const json::value* urls = member.as_object().if_contains("clientURLs");
      if (urls == nullptr || !urls->is_array()) return std::nullopt;
      for (const json::value& url : urls->as_array()) {
        if (!url.is_string()) continue;
        std::string_view address = url.as_string();
        if (const auto scheme = address.find("://"); scheme != std::string_view::npos) {
          address.remove_prefix(scheme + 3);
        }
        const auto found = std::find(options_.endpoints.begin(), options_.endpoints.end(), address);
        if (found != options_.endpoints.end()) {
          return static_cast<std::size_t>(found - options_.endpoints.begin());
        }
      }
    }
    return std::nullopt;
  }

  void Enqueue(const std::shared_ptr<Call>& call) {
    if (shutting_down_) return call->done(Closed(), {});
    waiting_.push_back(call);
    Dispatch();
  }

  // Starts waiting operations, in order, on free connections of the preferred member.
  void Dispatch() {
    while (!waiting_.empty() && !shutting_down_) {
      const std::shared_ptr<Connection> connection = FreeConnection(preferred_.load());
      if (!connection) break;
      std::shared_ptr<Call> call = std::move(waiting_.front());
      waiting_.pop_front();
      if (Clock::now() >= call->end) {
        call->done(Status::Unavailable("etcd: no connection was free within the operation timeout"),
                   {});
        continue;
      }
      Start(connection, std::move(call));
    }
    waiting_count_ = waiting_.size();
    ArmSweep();
  }

  // An idle connection of `member`, or a new one while its pool has room.
  std::shared_ptr<Connection> FreeConnection(std::size_t member) {
    std::vector<std::shared_ptr<Connection>>& pool = members_[member];
    for (const std::shared_ptr<Connection>& connection : pool) {
      if (!connection->call) return connection;
    }
    if (pool.size() >= pool_) return nullptr;
    pool.push_back(std::make_shared<Connection>(member));
    return pool.back();
  }

  // Operations that wait past their operation timeout (every connection busy with attempts
  // that time out one after another) fail without an attempt.
  void ArmSweep() {
    if (sweep_armed_ || waiting_.empty() || shutting_down_) return;
    sweep_armed_ = true;
    sweep_.expires_after(
        std::max<Clock::duration>(options_.request_timeout / 4, std::chrono::milliseconds(10)));
    sweep_.async_wait([this](beast::error_code) {
      sweep_armed_ = false;
      if (shutting_down_) return;
      const Clock::time_point now = Clock::now();
      std::vector<std::shared_ptr<Call>> expired;
      std::erase_if(waiting_, [&](const std::shared_ptr<Call>& call) {
        if (now < call->end) return false;
        expired.push_back(call);
        return true;
      });
      waiting_count_ = waiting_.size();
      for (const std::shared_ptr<Call>& call : expired) {
        call->done(Status::Unavailable("etcd: no connection was free within the operation timeout"),
                   {});
      }
      ArmSweep();
    });
  }

  void Start(const std::shared_ptr<Connection>& connection, std::shared_ptr<Call> call) {
    connection->call = std::move(call);
    connection->deadline = std::min(connection->call->end, Clock::now() + options_.request_timeout);
    const std::size_t in_flight = ++in_flight_;
    std::size_t high = in_flight_high_water_.load();
    while (in_flight > high && !in_flight_high_water_.compare_exchange_weak(high, in_flight)) {
    }
    if (connection->open) return Send(connection);
    Connect(connection);
  }

  void Connect(const std::shared_ptr<Connection>& connection) {
    const std::string& endpoint = options_.endpoints[connection->member];
    tcp::endpoint address;
    if (!ParseEtcdEndpoint(endpoint, &address)) {
      return Finish(connection,
                    {Status::InvalidArgument("etcd: bad endpoint '" + endpoint + "'"),
                     options_.endpoints.size() > 1, false},
                    true);
    }
    if (options_.tls_context) {
      connection->tls.emplace(ioc_, *options_.tls_context);
    } else {
      connection->plain.emplace(ioc_);
    }
    connection->Lowest().expires_at(connection->deadline);
    connection->Lowest().async_connect(address, [this, connection](beast::error_code ec) {
      const std::string& endpoint = options_.endpoints[connection->member];
      if (ec) {
        return Finish(
            connection,
            {Status::Unavailable("etcd " + endpoint + ": connect: " + ec.message()), true, false},
            true);
      }
      if (!connection->tls) return Opened(connection);
      // The certificate must chain to the configured CA and name the member (unless turned
      // off); a refusal is counted and fails over like a refused connection, never to plain.
      if (options_.tls) {
        tls_client::PrepareClientHandshake(*options_.tls, EtcdEndpointHost(endpoint),
                                           connection->tls->native_handle());
      }
      connection->tls->async_handshake(
          net::ssl::stream_base::client, [this, connection](beast::error_code ec) {
            if (!ec) return Opened(connection);
            counters_->tls_failures.fetch_add(1, std::memory_order_relaxed);
            Finish(connection,
                   {Status::Unavailable("etcd " + options_.endpoints[connection->member] +
                                        ": TLS handshake: " + ec.message()),
                    true, false},
                   true);
          });
    });
  }

  void Opened(const std::shared_ptr<Connection>& connection) {
    connection->open = true;
    ++open_connections_;
    Send(connection);
  }

  template <class Operation>
  static void WithStream(Connection& connection, Operation operation) {
    if (connection.tls) {
      operation(*connection.tls);
    } else {
      operation(*connection.plain);
    }
  }

  void Send(const std::shared_ptr<Connection>& connection) {
    const Call& call = *connection->call;
    http::request<http::string_body>& request = connection->request;
    request = {http::verb::post, call.path, 11};
    request.set(http::field::host, options_.endpoints[connection->member]);
    request.set(http::field::content_type, "application/json");
    request.keep_alive(true);
    request.body() = call.body;
    request.prepare_payload();
    connection->Lowest().expires_at(connection->deadline);
    WithStream(*connection, [&](auto& stream) {
      http::async_write(stream, request, [this, connection](beast::error_code ec, std::size_t) {
        if (ec) return Failed(connection, ec);
        Receive(connection);
      });
    });
  }

  void Receive(const std::shared_ptr<Connection>& connection) {
    connection->parser.emplace();
    connection->parser->body_limit(kEtcdMaxAnswerBytes);
    connection->Lowest().expires_at(connection->deadline);
    WithStream(*connection, [&](auto& stream) {
      http::async_read(stream, connection->buffer, *connection->parser,
                       [this, connection](beast::error_code ec, std::size_t) {
                         if (ec) return Failed(connection, ec);
                         Answered(connection);
                       });
    });
  }

  // The request may have reached the member: written, or partly.
  void Failed(const std::shared_ptr<Connection>& connection, const beast::error_code& ec) {
    Finish(connection,
           {Status::Unavailable("etcd " + options_.endpoints[connection->member] + ": " +
                                ec.message()),
            true, true},
           true);
  }

  void Answered(const std::shared_ptr<Connection>& connection) {
    counters_->round_trips.fetch_add(1, std::memory_order_relaxed);
    http::response<http::string_body> response = connection->parser->release();
    json::object out;
    const EtcdAnswer answer = DecodeEtcdAnswer(options_.endpoints[connection->member],
                                               response.result_int(), response.body(), &out);
    Finish(connection, {answer.status, answer.retryable, true}, !response.keep_alive(),
           std::move(out));
  }

  // Ends the attempt on `connection` (closed when `drop`): answers its operation, or sends it
  // to the next member under the retry rule, and gives the connection to the next operation.
  void Finish(const std::shared_ptr<Connection>& connection, EtcdAttempt attempt, bool drop,
              json::object out = {}) {
    std::shared_ptr<Call> call = std::move(connection->call);
    connection->call.reset();
    --in_flight_;
    if (drop) Drop(connection);
    if (shutting_down_) return call->done(Closed(), {});
    if (attempt.status.ok() || !attempt.retryable) {
      call->done(std::move(attempt.status), std::move(out));
      return Dispatch();
    }
    counters_->errors.fetch_add(1, std::memory_order_relaxed);
    Failover(connection->member);
    if (attempt.sent && !call->idempotent) {
      call->done(
          Status::Unavailable("etcd: outcome unknown, not retried: " + attempt.status.message()),
          {});
      return Dispatch();
    }
    if (Clock::now() >= call->end) {
      call->done(Status::Unavailable("etcd: no member answered within the operation timeout (" +
                                     attempt.status.message() + ")"),
                 {});
      return Dispatch();
    }
    if (++call->failed_in_a_row % options_.endpoints.size() != 0) {
      waiting_.push_front(std::move(call));
      return Dispatch();
    }
    auto pause = std::make_shared<net::steady_timer>(ioc_, kEtcdRoundPause);
    pause->async_wait([this, pause, call](beast::error_code) {
      if (shutting_down_) return call->done(Closed(), {});
      waiting_.push_front(call);
      Dispatch();
    });
    Dispatch();
  }

  // Moves the preferred member on after a failure there (once, however many attempts on it
  // fail together), and closes its idle connections: a dead member's would fail their next
  // request after it was sent, which a non-idempotent operation could not retry.
  void Failover(std::size_t member) {
    if (preferred_.load() != member) return;
    preferred_ = (member + 1) % options_.endpoints.size();
    counters_->failovers.fetch_add(1, std::memory_order_relaxed);
    std::vector<std::shared_ptr<Connection>> idle;
    for (const std::shared_ptr<Connection>& connection : members_[member]) {
      if (!connection->call) idle.push_back(connection);
    }
    for (const std::shared_ptr<Connection>& connection : idle) Drop(connection);
    FindLeader();
  }

  // No TLS close_notify, as in the synchronous client: etcd does not need it.
  void Drop(const std::shared_ptr<Connection>& connection) {
    if (connection->open) --open_connections_;
    connection->open = false;
    if (connection->started()) {
      beast::error_code ignored;
      connection->Lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
      connection->Lowest().close();
    }
    std::erase(members_[connection->member], connection);
  }

  void Shutdown() {
    shutting_down_ = true;
    sweep_.cancel();
    std::deque<std::shared_ptr<Call>> waiting = std::move(waiting_);
    waiting_.clear();
    waiting_count_ = 0;
    for (const std::shared_ptr<Call>& call : waiting) call->done(Closed(), {});
    // Attempts in flight end with operation_aborted and call back Closed (Finish).
    for (std::vector<std::shared_ptr<Connection>>& pool : members_) {
      for (const std::shared_ptr<Connection>& connection : std::vector(pool)) {
        if (connection->started()) {
          beast::error_code ignored;
          connection->Lowest().socket().close(ignored);
        }
        if (!connection->call) Drop(connection);
      }
    }
  }

  EtcdClientOptions options_;
  const std::shared_ptr<EtcdClientCounters> counters_;
  const std::size_t pool_;

  net::io_context ioc_{1};
  net::executor_work_guard<net::io_context::executor_type> work_ = net::make_work_guard(ioc_);
  // The client's thread only:
  std::vector<std::vector<std::shared_ptr<Connection>>> members_;  // the pool, per member
  std::deque<std::shared_ptr<Call>> waiting_;
  net::steady_timer sweep_;
  bool sweep_armed_ = false;
  bool shutting_down_ = false;
  bool finding_leader_ = false;

  // Written on the client's thread, read by stats():
  std::atomic<std::size_t> preferred_{0};
  std::atomic<std::size_t> open_connections_{0};
  std::atomic<std::size_t> in_flight_{0};
  std::atomic<std::size_t> in_flight_high_water_{0};
  std::atomic<std::size_t> waiting_count_{0};
  std::atomic<std::size_t> leaders_found_{0};

  std::mutex mu_;
  bool closed_ = false;
  std::thread thread_;
};

EtcdAsyncClient::EtcdAsyncClient(EtcdClientOptions options,
                                 std::shared_ptr<EtcdClientCounters> counters,
                                 std::size_t connections_per_member)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(counters),
                                   connections_per_member)) {}

EtcdAsyncClient::~EtcdAsyncClient() = default;

void EtcdAsyncClient::Get(std::string_view key, GetCallback callback) {
  impl_->Submit("/v3/kv/range", json::serialize(EtcdRangeRequest(key)), /*idempotent=*/true,
                [callback = std::move(callback)](Status status, json::object answer) {
                  std::vector<EtcdKeyValue> kvs;
                  if (status.ok()) status = DecodeEtcdKvs(answer, &kvs);
                  if (!status.ok()) return callback(std::move(status), std::nullopt);
                  std::optional<EtcdKeyValue> found;
                  if (!kvs.empty()) found = std::move(kvs.front());
                  callback(Status::Ok(), std::move(found));
                });
}

void EtcdAsyncClient::Txn(const std::vector<EtcdCompare>& compares,
                          const std::vector<EtcdOp>& success, const std::vector<EtcdOp>& failure,
                          bool idempotent, TxnCallback callback) {
  impl_->Submit("/v3/kv/txn", json::serialize(EtcdTxnRequest(compares, success, failure)),
                idempotent, [callback = std::move(callback)](Status status, json::object answer) {
                  EtcdTxnResult result;
                  if (status.ok()) status = DecodeEtcdTxn(answer, &result);
                  callback(std::move(status), std::move(result));
                });
}

EtcdAsyncClientStats EtcdAsyncClient::stats() const { return impl_->stats(); }

void EtcdAsyncClient::Close() { impl_->Close(); }

}  // namespace fencegate::lockstore::etcd
