#include "gateway/session/session.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>

#include "base/net/deadline_clock.h"
#include "gateway/cluster/replica_cluster.h"
#include "gateway/http/header_sanitizer.h"
#include "gateway/http/host_canonical.h"
#include "gateway/http/path_canonical.h"
#include "gateway/http/request_fields.h"
#include "gateway/http/request_framing.h"
#include "gateway/http/time_format.h"
#include "gateway/server/network_thread.h"
#include "gateway/tls/handshake.h"
#include "gateway/tls/listener_tls.h"
#include "lockstore/tokens/token.h"

namespace fencegate::gateway {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;

namespace {

constexpr std::size_t kHeaderReadChunk = 4096;
constexpr std::size_t kMaxIdleBufferCapacity = 16 * 1024;
// A chunked body is read through buffer_ (the parser strips the framing) at most this much at
// a time, which bounds what buffer_ grows to for the request.
constexpr std::size_t kMaxChunkedBodyRead = 64 * 1024;
// A refused request's body up to this size is read and discarded so the connection survives;
// a larger one costs less to cut off (Connection: close).
constexpr std::uint64_t kMaxDrainBytes = 64 * 1024;
// After answering with Connection: close while the client may still be sending, keep reading
// (and discarding) this long so the kernel does not reset the connection over the response.
constexpr auto kLingerTime = std::chrono::seconds(2);
constexpr std::string_view kContinueResponse = "HTTP/1.1 100 Continue\r\n\r\n";
// Lock API requests carry a few small JSON fields.
constexpr std::size_t kMaxLockBody = 4096;

bool StatusHasNoBody(unsigned status) { return status < 200 || status == 204 || status == 304; }

}  // namespace

Session::Session(ClientSocket socket, NetworkThread& thread,
                 std::shared_ptr<net::ssl::context> tls_context)
    : thread_(thread),
      context_(thread.context()),
      stream_(ClientStream(std::move(socket)), std::move(tls_context)),
      client_deadline_(stream_.get_executor(), &Session::CancelClientIo),
      barrier_deadline_(stream_.get_executor(), &Session::OnFenceDeadline),
      body_read_timeout_(stream_.get_executor()) {
  error_code ec;
  const auto remote = stream_.socket().remote_endpoint(ec);
  if (!ec) client_ip_ = remote.address().to_string();
  context_.open_connections.fetch_add(1, std::memory_order_relaxed);
  thread_.Register(this);
}

Session::~Session() {
  CloseSocket();
  thread_.Unregister(this);
}

void Session::Start() {
  if (stream_.is_tls()) {
    StartTls();
    return;
  }
  StartRequest();
}

void Session::CloseIfIdle() {
  if (phase_ == Phase::kReadingHeader) {
    phase_ = Phase::kClosed;
    CloseSocket();
  }
}

void Session::CloseSocket() {
  if (socket_closed_) return;
  socket_closed_ = true;
  phase_ = Phase::kClosed;
  body_read_timeout_.Stop();
  client_deadline_.Stop();
  barrier_deadline_.Stop();
  error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.socket().close(ec);
  context_.open_connections.fetch_sub(1, std::memory_order_relaxed);
}

// ---- Reading the request header ----

void Session::StartRequest() {
  const Config& config = *context_.config;
  body_read_timeout_.Stop();
  // A chunked body was read through buffer_ in relay-buffer-sized pieces; an idle connection
  // does not keep that room.
  if (buffer_.size() == 0 && buffer_.capacity() > kMaxIdleBufferCapacity) buffer_.shrink_to_fit();
  parser_.emplace();
  // The header block size is checked before parsing (see ContinueHeaderRead); the parser's
  // own limit only backs it up.
  parser_->header_limit(static_cast<std::uint32_t>(config.limits.max_header_bytes + 4));
  parser_->body_limit(config.limits.max_body_bytes);
  exchange_.request_id.clear();
  exchange_.fence_key.clear();
  std::string request_id = std::move(exchange_.request_id);
  std::string fence_key = std::move(exchange_.fence_key);
  exchange_ = Exchange{};
  idempotency_.Reset();
  exchange_.request_id = std::move(request_id);
  exchange_.fence_key = std::move(fence_key);
  header_scanned_ = 0;
  phase_ = Phase::kReadingHeader;
  ContinueHeaderRead();
}

void Session::ContinueHeaderRead() {
  // A client may send empty lines between requests (RFC 9112 2.2): skip them.
  while (buffer_.size() >= 2 && static_cast<const char*>(buffer_.data().data())[0] == '\r' &&
         static_cast<const char*>(buffer_.data().data())[1] == '\n' && header_scanned_ == 0) {
    buffer_.consume(2);
  }
  const std::string_view data(static_cast<const char*>(buffer_.data().data()), buffer_.size());
  const std::size_t max_header = context_.config->limits.max_header_bytes;
  // No request line starts with this byte; a ClientHello does, and would otherwise wait out
  // the header timeout for a header end that never comes.
  if (header_scanned_ == 0 && !data.empty() && !stream_.is_tls() &&
      static_cast<unsigned char>(data[0]) == tls::kTlsHandshakeRecord) {
    if (context_.traffic_tls != nullptr) context_.traffic_tls->CountTlsOnPlainPort();
    Refuse({.refusal = Refusal::kTlsOnPlainPort, .outcome = "bad_request", .close = true});
    return;
  }
  if (const auto end = FindHeaderBlockEnd(data, header_scanned_)) {
    if (*end > max_header) {
      Refuse({.refusal = Refusal::kHeaderTooLarge, .outcome = "bad_request", .close = true});
      return;
    }
    OnHeaderBlock(*end);
    return;
  }
  header_scanned_ = data.size();
  if (data.size() >= max_header) {
    Refuse({.refusal = Refusal::kHeaderTooLarge, .outcome = "bad_request", .close = true});
    return;
  }
  std::chrono::steady_clock::time_point deadline;
  if (data.empty()) {
    deadline = adapters::DeadlineClock::Now() + context_.config->timeouts.idle;
  } else {
    if (exchange_.started_unix_ms == 0) {
      // The first bytes of this request: its header must be complete by the deadline.
      exchange_.started_unix_ms = NowUnixMs();
      header_deadline_ = adapters::DeadlineClock::Now() + context_.config->timeouts.header_read;
    }
    deadline = header_deadline_;
  }
  auto self = shared_from_this();
  client_deadline_.Begin(deadline, self);
  stream_.untimed().async_read_some(
      buffer_.prepare(kHeaderReadChunk),
      [self = std::move(self)](error_code ec, std::size_t bytes) {
        if (self->client_deadline_.End() && ec == net::error::operation_aborted) {
          ec = beast::error::timeout;
        }
        self->OnHeaderBytes(ec, bytes);
      });
}

void Session::CancelClientIo() {
  error_code ignored;
  stream_.socket().cancel(ignored);
}

void Session::OnHeaderBytes(error_code ec, std::size_t bytes) {
  if (ec) {
    // Idle timeout, the client closed, or shutdown closed an idle connection: nothing to answer.
    Close();
    return;
  }
  buffer_.commit(bytes);
  ContinueHeaderRead();
}

void Session::BeginExchange() {
  if (exchange_.begun) return;
  exchange_.begun = true;
  if (exchange_.started_unix_ms == 0) exchange_.started_unix_ms = NowUnixMs();
  exchange_.started = std::chrono::steady_clock::now();
  context_.requests_in_flight.fetch_add(1, std::memory_order_relaxed);
}

void Session::OnHeaderBlock(std::size_t length) {
  BeginExchange();
  phase_ = Phase::kAdmitting;

  const std::string_view block(static_cast<const char*>(buffer_.data().data()), length);
  error_code ec;
  const std::size_t used = parser_->put(net::buffer(block.data(), block.size()), ec);
  buffer_.consume(used);

  if (ec == http::error::body_limit) {
    Refuse({.refusal = Refusal::kBodyTooLarge,
            .detail = "the announced Content-Length exceeds limits.max_body_bytes",
            .outcome = "bad_request",
            .close = true});
    return;
  }
  if (ec == http::error::header_limit) {
    Refuse({.refusal = Refusal::kHeaderTooLarge, .outcome = "bad_request", .close = true});
    return;
  }
  if (ec || !parser_->is_header_done()) {
    scratch_ = ec ? ec.message() : "incomplete request header";
    Refuse({.refusal = Refusal::kBadRequest,
            .detail = scratch_,
            .outcome = "bad_request",
            .close = true});
    return;
  }
  if (ContainsObsFold(block)) {
    Refuse({.refusal = Refusal::kBadRequest,
            .detail = "obsolete line folding (obs-fold) is not accepted",
            .outcome = "bad_request",
            .close = true});
    return;
  }
  const FramingViolation violation = CheckRequestFraming(parser_->get());
  if (violation != FramingViolation::kNone) {
    Refuse({.refusal = Refusal::kBadRequest,
            .detail = FramingViolationDetail(violation),
            .outcome = "bad_request",
            .close = true});
    return;
  }
  if (!CheckUnderscoreFields()) return;
  HandleRequest();
}

// ---- Routing and fencing ----

std::string_view Session::RequestPath() const {
  if (!parser_) return {};
  const std::string_view target = parser_->get().target();
  return target.substr(0, target.find('?'));
}

void Session::HandleRequest() {
  auto& request = parser_->get();
  exchange_.keep_alive = parser_->keep_alive();
  exchange_.head = request.method() == http::verb::head;
  const RequestFields fields = ScanRequestFields(request);
  exchange_.expect_continue = beast::iequals(fields.expect, "100-continue");

  if (fields.request_id_count == 1 && IsAcceptableRequestId(fields.request_id)) {
    exchange_.request_id.assign(fields.request_id);
  } else {
    thread_.request_ids().Generate(&exchange_.request_id);
  }

  const char* host_problem = nullptr;
  if (fields.host_count > 1) {
    host_problem = "the request carries more than one Host field";
  } else if (fields.host_count == 0 && request.version() >= 11) {
    host_problem = "an HTTP/1.1 request needs a Host field";
  } else if (!CanonicaliseHost(fields.host, &host_lower_)) {
    host_problem = "the Host field is not a host name or IP literal with an optional port";
  }
  if (host_problem != nullptr) {
    Refuse({.refusal = Refusal::kBadHost, .detail = host_problem, .outcome = "bad_request"});
    return;
  }
  // From here on the request has its canonical target: routing, fence keys, the lock API and
  // every adapter see one spelling per resource.
  std::string_view canonical_target;
  const PathViolation path_violation =
      CanonicaliseTarget(request.target(), &canonical_target_, &canonical_target);
  if (path_violation != PathViolation::kNone) {
    Refuse({.refusal = Refusal::kBadPath,
            .detail = PathViolationDetail(path_violation),
            .outcome = "bad_request"});
    return;
  }
  if (canonical_target.data() != request.target().data()) request.target(canonical_target);
  const std::string_view host = host_lower_;
  const std::string_view path = RequestPath();
  if (context_.locks != nullptr && context_.locks->Matches(path)) {
    if (AuthorizeLock(path, fields)) HandleLockRequest();
    return;
  }
  const auto route_index = context_.router->Match(host, path);
  if (!route_index) {
    Refuse({.refusal = Refusal::kNoRoute, .outcome = "no_route"});
    return;
  }
  exchange_.route = &context_.routes[*route_index];
  const RouteRuntime& route = *exchange_.route;
  if (!Authorize(fields)) return;
  if (!CheckIdempotencyKey()) return;
  exchange_.fenced = route.IsFenced(request.method(), request.method_string());
  if (!exchange_.fenced) {
    exchange_.outcome = "unfenced";
    Proceed();
    return;
  }

  const std::size_t token_fields = fields.fencing_token_count;
  if (token_fields == 0) {
    Refuse({.refusal = Refusal::kMissingToken,
            .outcome = "missing_token",
            .rejection = RejectionReason::kMissingToken});
    return;
  }
  if (token_fields > 1) {
    Refuse({.refusal = Refusal::kInvalidToken,
            .detail = "the Fencing-Token header must appear exactly once",
            .outcome = "invalid_token",
            .rejection = RejectionReason::kInvalidToken});
    return;
  }
  exchange_.token = lockstore::ParseToken(fields.fencing_token);
  if (!exchange_.token) {
    Refuse({.refusal = Refusal::kInvalidToken,
            .outcome = "invalid_token",
            .rejection = RejectionReason::kInvalidToken});
    return;
  }

  const lockstore::RequestFacts facts{path, host_lower_, route.config->name};
  if (!route.config->fence_key.Render(facts, &exchange_.fence_key)) {
    exchange_.fence_key.clear();
    Refuse({.refusal = Refusal::kNoFenceKey,
            .outcome = "bad_request",
            .audit_reason = "no_fence_key"});
    return;
  }
  if (!CheckTokenSignature()) return;
  if (!RouteByShard()) return;
  Admit();
}

void Session::Admit() {
  self_hold_ = shared_from_this();
  auto decision = context_.admission->Admit(
      exchange_.fence_key, *exchange_.token, exchange_.request_id,
      [this](const lockstore::AdmissionDecision& late) {
        // On a store thread or another network thread: hop back to this session's thread.
        thread_.decisions().Deliver(this, late);
      },
      AdmitBound());
  if (decision) {
    self_hold_.reset();
    OnAdmissionDecision(*decision);
    return;
  }
  barrier_deadline_.Begin(std::chrono::steady_clock::now() + context_.config->timeouts.barrier_wait,
                          self_hold_);
}

void Session::OnLateAdmissionDecision(const lockstore::AdmissionDecision& decision) {
  const auto self = std::move(self_hold_);
  barrier_deadline_.End();
  if (exchange_.abandoned) {
    // The client already got 503 and the connection is closed; release the fence at once.
    if (decision.kind == lockstore::AdmissionDecision::Kind::kAdmitted) {
      context_.admission->Complete(exchange_.fence_key, *exchange_.token);
    }
    return;
  }
  OnAdmissionDecision(decision);
}

void Session::OnFenceDeadline() {
  if (exchange_.admitted) {
    CutAdmittedWrite();
    return;
  }
  OnBarrierTimeout();
}

// An admitted write holds every newer token on its fence key at the advance barrier, so it may
// not take longer than timeouts.write_deadline. What the session can cut is its side: the body
// read (or the wait for body bytes) or the response write in progress ends with an error, and
// later body reads fail at once. The adapter then abandons the write as for any client that
// went away (the http adapter closes the upstream connection with the body short of its
// framing, the filesystem adapter removes its temp file) and reports done, which releases the
// fence. A write whose body has all arrived waits for the backend's answer under the backend's
// own response_timeout.
void Session::CutAdmittedWrite() {
  exchange_.write_cut = true;
  error_code ignored;
  stream_.socket().cancel(ignored);
}

void Session::OnBarrierTimeout() {
  if (phase_ != Phase::kAdmitting || exchange_.abandoned || !self_hold_) return;
  exchange_.abandoned = true;
  exchange_.barrier_wait = context_.config->timeouts.barrier_wait;
  exchange_.route->metrics->barrier_wait->Observe(
      thread_.index(), std::chrono::duration<double>(exchange_.barrier_wait).count());
  Refuse({.refusal = Refusal::kBarrierTimeout,
          .outcome = "barrier_timeout",
          .rejection = RejectionReason::kBarrierTimeout,
          .close = true,
          .retry_after = true,
          .fence_fields = true});
}

void Session::OnAdmissionDecision(const lockstore::AdmissionDecision& decision) {
  const RouteMetrics& metrics = *exchange_.route->metrics;
  exchange_.highest = decision.highest;
  exchange_.barrier_wait = decision.barrier_wait;
  switch (decision.kind) {
    case lockstore::AdmissionDecision::Kind::kAdmitted:
      exchange_.admitted = true;
      if (SelfFenced()) {
        // The shard stopped being ours while the advance was made durable: send nothing.
        CompleteAdmission();
        RefuseSelfFenced();
        return;
      }
      exchange_.outcome = "admitted";
      barrier_deadline_.Begin(
          adapters::DeadlineClock::Now() + context_.config->timeouts.write_deadline, *this);
      metrics.writes_admitted->Increment();
      if (decision.advanced) metrics.fence_advances->Increment();
      metrics.barrier_wait->Observe(thread_.index(),
                                    std::chrono::duration<double>(decision.barrier_wait).count());
      Proceed();
      return;
    case lockstore::AdmissionDecision::Kind::kStale:
      Refuse({.refusal = Refusal::kStaleToken,
              .outcome = "stale_token",
              .rejection = RejectionReason::kStaleToken,
              .fence_fields = true});
      return;
    case lockstore::AdmissionDecision::Kind::kTooFarAhead:
      if (exchange_.advance_forbidden) {
        RefuseAdvance();
        return;
      }
      if (exchange_.route->token_verifier != nullptr) {
        VerifyTokenLive();
        return;
      }
      RefuseToken(TokenRefusal::kTooFarAhead);
      return;
    case lockstore::AdmissionDecision::Kind::kRepairing:
      Refuse({.refusal = Refusal::kFenceRepairInProgress,
              .outcome = "fence_repair",
              .rejection = RejectionReason::kFenceRepair,
              .retry_after = true,
              .fence_fields = true});
      return;
    case lockstore::AdmissionDecision::Kind::kStoreError:
      scratch_ = decision.status.ToString();
      Refuse({.refusal = Refusal::kStoreError,
              .detail = scratch_,
              .outcome = "store_error",
              .rejection = RejectionReason::kStoreError,
              .retry_after = true,
              .fence_fields = true});
      return;
  }
}

// ---- The lock API ----

void Session::HandleLockRequest() {
  exchange_.outcome = "lock";
  const auto length = parser_->content_length();
  if (length && *length > kMaxLockBody) {
    Refuse({.refusal = Refusal::kBodyTooLarge,
            .detail = "a lock request body is at most 4096 bytes",
            .outcome = "bad_request",
            .close = true});
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
    Refuse({.refusal = Refusal::kBodyTooLarge,
            .detail = "a lock request body is at most 4096 bytes",
            .outcome = "bad_request",
            .close = true});
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

// ---- Forwarding ----

void Session::Forward() {
  phase_ = Phase::kForwarding;
  auto& request = parser_->get();
  SanitizeRequestHeader(request, {client_ip_, exchange_.request_id, tls_established_}, &scratch_);
  adapters::ForwardRequest forward;
  forward.header = &request;
  forward.route_prefix = exchange_.route->config->prefix;
  if (exchange_.admitted || exchange_.peer_adapter) forward.fencing_token = *exchange_.token;
  forward.fence_key = exchange_.fence_key;
  forward.request_id = exchange_.request_id;
  self_hold_ = shared_from_this();
  thread_.adapter(exchange_.peer_adapter.value_or(exchange_.route->backend_index))
      .Forward(forward, *this,
               [this](adapters::ForwardOutcome outcome) { OnForwardDone(std::move(outcome)); });
}

void Session::CompleteAdmission() {
  if (!exchange_.admitted) return;
  exchange_.admitted = false;
  barrier_deadline_.End();
  context_.admission->Complete(exchange_.fence_key, *exchange_.token);
}

void Session::OnForwardDone(adapters::ForwardOutcome outcome) {
  const auto self = std::move(self_hold_);
  // The backend exchange is over, whatever the client side still needs: release the fence.
  CompleteAdmission();
  if (idempotency_.claimed()) {
    // A retry sent after this answer must find the key settled: answer once it is durable.
    SettleIdempotency(std::move(outcome));
    return;
  }
  exchange_.upstream_status = outcome.upstream_status;
  if (exchange_.peer_adapter) {
    context_.cluster->CountForward(outcome.failure == adapters::ForwardOutcome::Failure::kNone ||
                                   outcome.failure == adapters::ForwardOutcome::Failure::kClient);
  }
  if (exchange_.self_fenced && !outcome.response_started) {
    RefuseSelfFenced();
    return;
  }
  if (exchange_.write_cut && !outcome.response_started &&
      outcome.failure == adapters::ForwardOutcome::Failure::kClient) {
    exchange_.outcome = "write_deadline";
    RespondWithRefusal(Refusal::kWriteDeadlineExceeded, {}, /*close=*/true);
    return;
  }
  if (exchange_.peer_adapter && !outcome.response_started &&
      outcome.failure == adapters::ForwardOutcome::Failure::kUpstreamConnect) {
    // The owner is gone (crashed, stopping): its shards move after its lease and a quarantine.
    Refuse({.refusal = Refusal::kShardUnavailable,
            .detail = "the replica that owns this fence key's shard cannot be reached; retry",
            .outcome = "shard_unavailable",
            .audit_reason = "shard_unavailable",
            .close = !parser_->is_done(),
            .retry_after = true});
    return;
  }
  const RouteMetrics& metrics = *exchange_.route->metrics;
  using Failure = adapters::ForwardOutcome::Failure;
  switch (outcome.failure) {
    case Failure::kUpstreamConnect:
      metrics.CountUpstreamError(UpstreamErrorKind::kConnect);
      break;
    case Failure::kUpstreamTimeout:
      metrics.CountUpstreamError(UpstreamErrorKind::kTimeout);
      break;
    case Failure::kUpstreamProtocol:
      metrics.CountUpstreamError(UpstreamErrorKind::kProtocol);
      break;
    case Failure::kBackendIO:
      metrics.CountUpstreamError(UpstreamErrorKind::kBackendIO);
      break;
    case Failure::kNone:
    case Failure::kClient:
      break;
  }
  if (outcome.failure != Failure::kNone && outcome.failure != Failure::kClient) {
    exchange_.outcome = "upstream_error";
  }

  if (outcome.response_started) {
    if (!outcome.response_complete || !parser_->is_done()) exchange_.close_after = true;
    FinishRequest();
    return;
  }
  phase_ = Phase::kResponding;
  if (outcome.problem) {
    const adapters::Problem& problem = *outcome.problem;
    ProblemDetails details{.status = problem.status,
                           .slug = problem.type,
                           .title = problem.title,
                           .detail = problem.detail,
                           .instance = RequestPath(),
                           .request_id = exchange_.request_id};
    // The backend itself holds a higher token (another gateway wrote it): a stale write,
    // counted and audited like the gateway's own refusals.
    if (problem.type == adapters::kStaleAtBackendProblemType) {
      exchange_.outcome = "backend_fence";
      if (outcome.backend_stale_token) exchange_.highest = *outcome.backend_stale_token;
      RecordRejection({.rejection = RejectionReason::kBackendFence});
      details.reason = RejectionReasonName(RejectionReason::kBackendFence);
      details.fence_key = exchange_.fence_key;
      details.presented_token = exchange_.token;
      if (outcome.backend_stale_token) details.highest_token = exchange_.highest;
    }
    RespondWithProblem(details, false, problem.retry_after);
    return;
  }
  switch (outcome.failure) {
    case Failure::kClient:
      if (outcome.error == http::error::body_limit) {
        RespondWithRefusal(Refusal::kBodyTooLarge, {}, /*close=*/true);
        return;
      }
      // The client is gone or broke framing: there is nobody to answer.
      exchange_.close_after = true;
      FinishRequest();
      return;
    case Failure::kUpstreamTimeout:
      RespondWithRefusal(Refusal::kUpstreamTimeout, {}, /*close=*/false);
      return;
    case Failure::kBackendIO:
      RespondWithRefusal(Refusal::kBackendIoError, outcome.error.message(), /*close=*/false);
      return;
    case Failure::kUpstreamConnect:
    case Failure::kUpstreamProtocol:
    case Failure::kNone:
      RespondWithRefusal(Refusal::kBadGateway,
                         outcome.failure == Failure::kUpstreamConnect
                             ? "could not connect to the backend"
                             : "the backend did not send a valid HTTP response",
                         /*close=*/false);
      return;
  }
}

// ---- Refusals and the gateway's own responses ----

void Session::Refuse(const RefusalReply& refusal) {
  BeginExchange();
  phase_ = Phase::kResponding;
  exchange_.outcome = refusal.outcome;
  if (exchange_.request_id.empty()) thread_.request_ids().Generate(&exchange_.request_id);
  if (refusal.rejection || !refusal.audit_reason.empty()) RecordRejection(refusal);
  ProblemDetails problem = RefusalProblem(refusal.refusal, refusal.detail);
  problem.instance = RequestPath();
  problem.request_id = exchange_.request_id;
  problem.reason = refusal.rejection ? RejectionReasonName(*refusal.rejection) : refusal.reason;
  if (refusal.fence_fields) {
    problem.fence_key = exchange_.fence_key;
    problem.presented_token = exchange_.token;
    problem.highest_token = exchange_.highest;
  }
  RespondWithProblem(problem, refusal.close, refusal.retry_after, refusal.www_authenticate);
}

void Session::RecordRejection(const RefusalReply& refusal) {
  if (refusal.rejection) exchange_.route->metrics->CountRejection(*refusal.rejection);
  lockstore::RejectionRecord record;
  record.at_ms = NowUnixMs();
  record.route = exchange_.route->config->name;
  record.fence_key = exchange_.fence_key;
  record.method = parser_->get().method_string();
  record.path = RequestPath();
  record.request_id = exchange_.request_id;
  record.reason =
      refusal.rejection ? RejectionReasonName(*refusal.rejection) : refusal.audit_reason;
  record.has_presented = exchange_.token.has_value();
  record.presented = exchange_.token.value_or(0);
  record.highest = exchange_.highest.value_or(0);
  context_.store->RecordRejection(std::move(record));
}

void Session::RespondWithRefusal(Refusal refusal, std::string_view detail, bool close) {
  ProblemDetails problem = RefusalProblem(refusal, detail);
  problem.instance = RequestPath();
  problem.request_id = exchange_.request_id;
  RespondWithProblem(problem, close, /*retry_after=*/false);
}

void Session::RespondWithProblem(const ProblemDetails& problem, bool close, bool retry_after,
                                 std::string_view www_authenticate) {
  RenderProblemJson(problem, &problem_body_);
  exchange_.status = problem.status;
  if (close) exchange_.close_after = true;
  response_.base() = adapters::ResponseHeader{};
  response_.result(problem.status);
  response_.set(http::field::content_type, kProblemContentType);
  response_.content_length(problem_body_.size());
  if (retry_after) response_.set(http::field::retry_after, "1");
  if (!www_authenticate.empty()) response_.set(http::field::www_authenticate, www_authenticate);
  DrainBodyThenWrite();
}

void Session::DrainBodyThenWrite() {
  if (exchange_.close_after || !parser_ || !parser_->is_header_done() || parser_->is_done()) {
    WriteOwnResponse();
    return;
  }
  // The body was not read. Without "100 Continue" the client may never send it; a chunked or
  // large one is cheaper to cut off than to read.
  const auto remaining = parser_->content_length_remaining();
  if ((exchange_.expect_continue && !exchange_.continue_sent) || !remaining ||
      *remaining > kMaxDrainBytes) {
    exchange_.close_after = true;
    WriteOwnResponse();
    return;
  }
  auto& body = parser_->get().body();
  scratch_.resize(16 * 1024);
  body.data = scratch_.data();
  body.size = scratch_.size();
  stream_.expires_after(context_.config->timeouts.body_read);
  http::async_read_some(stream_, buffer_, *parser_,
                        [self = shared_from_this()](error_code ec, std::size_t) {
                          if (ec == http::error::need_buffer) ec = {};
                          if (ec) {
                            self->exchange_.close_after = true;
                            self->WriteOwnResponse();
                            return;
                          }
                          self->DrainBodyThenWrite();
                        });
}

void Session::WriteOwnResponse() {
  exchange_.response_has_body = !exchange_.head;
  PrepareResponseHeader();
  message_writer_.Start(response_, exchange_.response_has_body);
  write_handler_ = [this](error_code ec) {
    if (ec) exchange_.close_after = true;
    FinishRequest();
  };
  WriteBodyPiece(net::buffer(problem_body_), true);
}

// ---- Downstream ----

bool Session::body_done() const { return parser_->is_done(); }

void Session::AsyncReadBody(net::mutable_buffer buffer, ReadHandler handler) {
  read_handler_ = std::move(handler);
  if (SelfFenced() || exchange_.write_cut) {
    // No more body bytes upstream once the shard's lease may have ended, or the write's
    // deadline passed: the adapter abandons the upload and the backend sees a truncated body.
    const error_code ec = exchange_.write_cut ? error_code(beast::error::timeout)
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
    stream_.expires_after(context_.config->timeouts.response_write);
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
  if (SelfFenced() || exchange_.write_cut ||
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
  if (stream_.is_tls() || buffer_.size() > 0 || parser_->is_done() || exchange_.write_cut ||
      SelfFenced() || (exchange_.expect_continue && !exchange_.continue_sent)) {
    return true;
  }
  body_wait_handler_ = std::move(handler);
  body_read_timeout_.Begin(context_.config->timeouts.body_read, shared_from_this(), [this] {
    error_code ignored;
    stream_.socket().cancel(ignored);
  });
  stream_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this()](error_code ec) {
    if (self->body_read_timeout_.End() && ec == net::error::operation_aborted) {
      ec = beast::error::timeout;
    }
    if (!ec && self->exchange_.write_cut) ec = beast::error::timeout;
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
// timer would cost two timer syscalls per piece: body_read_timeout_ keeps timeouts.body_read
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
  body_read_timeout_.Begin(context_.config->timeouts.body_read, shared_from_this(), [this] {
    error_code ignored;
    stream_.socket().cancel(ignored);
  });
  stream_.untimed().async_read_some(
      target, [self = shared_from_this(), in_place](error_code ec, std::size_t bytes) {
        if (self->body_read_timeout_.End() && ec == net::error::operation_aborted) {
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
  if (ec || done) body_read_timeout_.Stop();
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
  const bool keep_alive = exchange_.keep_alive && !exchange_.close_after &&
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
  client_deadline_.Begin(adapters::DeadlineClock::Now() + context_.config->timeouts.response_write,
                         self);
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

// ---- End of a request ----

void Session::FinishRequest() {
  const auto finished = std::chrono::steady_clock::now();
  const RouteMetrics& metrics =
      exchange_.route ? *exchange_.route->metrics : context_.metrics->unrouted();
  const http::verb method =
      parser_ && parser_->is_header_done() ? parser_->get().method() : http::verb::unknown;
  const double duration = std::chrono::duration<double>(finished - exchange_.started).count();
  metrics.CountRequest(method, exchange_.status);
  metrics.request_duration->Observe(thread_.index(), duration);
  context_.requests_in_flight.fetch_sub(1, std::memory_order_relaxed);

  ErrorLogCap::Verdict log_line;
  if (context_.access_log->enabled() && exchange_.status >= 400) {
    log_line = thread_.error_log_cap().Admit(client_ip_, exchange_.fence_key,
                                             exchange_.started_unix_ms / 1000);
    if (!log_line.log) context_.metrics->access_log_suppressed().Increment();
  }
  if (context_.access_log->enabled() && log_line.log) {
    AccessLogEntry entry;
    entry.time_ms = exchange_.started_unix_ms;
    entry.request_id = exchange_.request_id;
    entry.route = exchange_.route ? std::string_view(exchange_.route->config->name) : "";
    if (parser_ && parser_->is_header_done()) {
      entry.method = parser_->get().method_string();
      entry.path = parser_->get().target();
    }
    entry.status = exchange_.status;
    entry.fence_key = exchange_.fence_key;
    entry.presented_token = exchange_.token;
    entry.highest_token = exchange_.highest;
    entry.outcome = exchange_.outcome;
    entry.upstream_status = exchange_.upstream_status;
    entry.duration_ms = duration * 1000.0;
    entry.barrier_wait_ms =
        std::chrono::duration<double, std::milli>(exchange_.barrier_wait).count();
    entry.bytes_in = exchange_.bytes_in;
    entry.bytes_out = exchange_.bytes_out;
    entry.client = client_ip_;
    entry.suppressed = log_line.suppressed;
    context_.access_log->Write(entry);
  }

  if (exchange_.close_after || context_.draining.load(std::memory_order_relaxed)) {
    Close();
    return;
  }
  StartRequest();
}

void Session::Close() {
  if (socket_closed_) return;
  phase_ = Phase::kClosed;
  if (tls_established_) {
    ShutdownTls();
    return;
  }
  if (parser_ && parser_->is_header_done() && !parser_->is_done()) {
    LingeringClose();
    return;
  }
  CloseSocket();
}

void Session::LingeringClose() {
  error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  if (ec) {
    CloseSocket();
    return;
  }
  // Discard what the client still sends until it closes, so the response is not lost to a
  // reset; bounded by kLingerTime in total.
  stream_.expires_after(kLingerTime);
  struct Discard {
    std::shared_ptr<Session> self;
    void operator()(error_code ec = {}, std::size_t = 0) {
      if (ec) {
        self->CloseSocket();
        return;
      }
      self->buffer_.clear();
      self->stream_.async_read_some(self->buffer_.prepare(kHeaderReadChunk), std::move(*this));
    }
  };
  Discard{shared_from_this()}();
}

}  // namespace fencegate::gateway
