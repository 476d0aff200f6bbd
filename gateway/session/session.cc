#include "gateway/session/session.h"

#include <utility>

#include <boost/beast/core/error.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>

#include "base/net/deadline_clock.h"
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

constexpr std::size_t kMaxIdleBufferCapacity = 16 * 1024;
// A refused request's body up to this size is read and discarded so the connection survives;
// a larger one costs less to cut off (Connection: close).
constexpr std::uint64_t kMaxDrainBytes = 64 * 1024;
// After answering with Connection: close while the client may still be sending, keep reading
// (and discarding) this long so the kernel does not reset the connection over the response.
constexpr auto kLingerTime = std::chrono::seconds(2);
// The most of a refused request's User-Agent its audit record keeps (the trail is bounded in
// records, and each should stay small).
constexpr std::size_t kMaxRecordedUserAgent = 256;

// `text` cut to at most `limit` bytes, not inside a UTF-8 sequence.
std::string_view CutAtCharacter(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return text;
  while (limit > 0 && (static_cast<unsigned char>(text[limit]) & 0xC0) == 0x80) --limit;
  return text.substr(0, limit);
}

}  // namespace

Session::Session(ClientSocket socket, NetworkThread& thread,
                 std::shared_ptr<net::ssl::context> tls_context)
    : thread_(thread),
      context_(thread.context()),
      generation_view_(thread.AcquireGeneration()),
      generation_(*generation_view_.generation),
      stream_(ClientStream(std::move(socket)), std::move(tls_context)),
      client_deadline_(stream_.get_executor(), &Session::CancelClientIo),
      barrier_deadline_(stream_.get_executor(), &Session::OnFenceDeadline),
      body_read_deadline_(stream_.get_executor(), &Session::CancelClientIo),
      fenced_(context_.admission) {
  error_code ec;
  const auto remote = stream_.socket().remote_endpoint(ec);
  if (!ec) client_ip_ = remote.address().to_string();
  context_.open_connections.fetch_add(1, std::memory_order_relaxed);
  thread_.Register(this);
}

Session::~Session() {
  CloseSocket();
  thread_.Unregister(this);
  thread_.ReleaseGeneration(generation_view_);
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
  body_read_deadline_.Stop();
  client_deadline_.Stop();
  barrier_deadline_.Stop();
  error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.socket().close(ec);
  context_.open_connections.fetch_sub(1, std::memory_order_relaxed);
}

// ---- Reading the request header ----

void Session::StartRequest() {
  const Config& config = generation_.config;
  body_read_deadline_.Stop();
  // A chunked body was read through buffer_ in relay-buffer-sized pieces; an idle connection
  // does not keep that room.
  if (buffer_.size() == 0 && buffer_.capacity() > kMaxIdleBufferCapacity) buffer_.shrink_to_fit();
  parser_.emplace();
  // The header block size is checked before parsing (see ContinueHeaderRead); the parser's
  // own limit only backs it up.
  parser_->header_limit(static_cast<std::uint32_t>(config.limits.max_header_bytes + 4));
  parser_->body_limit(config.limits.max_body_bytes);
  exchange_.request_id.clear();
  std::string request_id = std::move(exchange_.request_id);
  exchange_ = Exchange{};
  fenced_.Reset();
  resource_fence_.Reset();
  idempotency_.Reset();
  exchange_.request_id = std::move(request_id);
  user_agent_.clear();
  header_scan_ = {};
  phase_ = Phase::kReadingHeader;
  ContinueHeaderRead();
}

void Session::ContinueHeaderRead() {
  // A client may send empty lines between requests (RFC 9112 2.2): skip them.
  while (buffer_.size() >= 2 && static_cast<const char*>(buffer_.data().data())[0] == '\r' &&
         static_cast<const char*>(buffer_.data().data())[1] == '\n' && header_scan_.scanned == 0) {
    buffer_.consume(2);
  }
  const std::string_view data(static_cast<const char*>(buffer_.data().data()), buffer_.size());
  const std::size_t max_header = generation_.config.limits.max_header_bytes;
  // No request line starts with this byte; a ClientHello does, and would otherwise wait out
  // the header timeout for a header end that never comes.
  if (header_scan_.scanned == 0 && !data.empty() && !stream_.is_tls() &&
      static_cast<unsigned char>(data[0]) == tls::kTlsHandshakeRecord) {
    if (context_.traffic_tls != nullptr) context_.traffic_tls->CountTlsOnPlainPort();
    RefuseUnreadable(Refusal::kTlsOnPlainPort);
    return;
  }
  if (const auto end = FindHeaderBlockEnd(data, &header_scan_)) {
    if (*end > max_header) {
      RefuseUnreadable(Refusal::kHeaderTooLarge);
      return;
    }
    OnHeaderBlock(*end);
    return;
  }
  if (data.size() >= max_header) {
    RefuseUnreadable(Refusal::kHeaderTooLarge);
    return;
  }
  std::chrono::steady_clock::time_point deadline;
  if (data.empty()) {
    deadline = adapters::DeadlineClock::Now() + generation_.config.timeouts.idle;
  } else {
    if (exchange_.started_unix_ms == 0) {
      // The first bytes of this request: its header must be complete by the deadline.
      exchange_.started_unix_ms = NowUnixMs();
      header_deadline_ = adapters::DeadlineClock::Now() + generation_.config.timeouts.header_read;
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
  const std::size_t used = parser_->put_header_block(block, ec);
  buffer_.consume(used);

  if (ec == http::error::body_limit) {
    RefuseUnreadable(Refusal::kBodyTooLarge,
                     "the announced Content-Length exceeds limits.max_body_bytes");
    return;
  }
  if (ec == http::error::header_limit) {
    RefuseUnreadable(Refusal::kHeaderTooLarge);
    return;
  }
  if (ec || !parser_->is_header_done()) {
    scratch_ = ec ? ec.message() : "incomplete request header";
    RefuseUnreadable(Refusal::kBadRequest, scratch_);
    return;
  }
  if (header_scan_.obs_fold) {
    RefuseUnreadable(Refusal::kBadRequest, "obsolete line folding (obs-fold) is not accepted");
    return;
  }
  const FramingViolation violation = CheckRequestFraming(parser_->get());
  if (violation != FramingViolation::kNone) {
    RefuseUnreadable(Refusal::kBadRequest, FramingViolationDetail(violation));
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
  exchange_.trace.Resolve(fields.traceparent, fields.traceparent_count,
                          generation_.config.trace_context.generate, thread_.traceparents());
  if (context_.access_log->enabled()) user_agent_.assign(fields.user_agent);

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
  const auto route_index = generation_.router->Match(host, path);
  if (!route_index) {
    Refuse({.refusal = Refusal::kNoRoute, .outcome = "no_route"});
    return;
  }
  exchange_.route = &generation_.routes[*route_index];
  const RouteRuntime& route = *exchange_.route;
  if (!Authorize(fields)) return;
  if (!CheckIdempotencyKey()) return;
  exchange_.fenced = route.IsFenced(request.method(), request.method_string());
  if (!exchange_.fenced) {
    exchange_.outcome = "unfenced";
    // Under policy fence_key the backend picks the server by the key: reads follow writes. A
    // path the template cannot render goes to any server (round robin).
    if (route.fence_key_affinity) {
      const lockstore::RequestFacts facts{path, host_lower_, route.config->name};
      if (!route.config->fence_key.Render(facts, &fenced_.fence_key())) fenced_.fence_key().clear();
    }
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
  fenced_.set_token(lockstore::ParseToken(fields.fencing_token));
  if (!fenced_.token()) {
    Refuse({.refusal = Refusal::kInvalidToken,
            .outcome = "invalid_token",
            .rejection = RejectionReason::kInvalidToken});
    return;
  }

  const lockstore::RequestFacts facts{path, host_lower_, route.config->name};
  if (!route.config->fence_key.Render(facts, &fenced_.fence_key())) {
    fenced_.fence_key().clear();
    Refuse({.refusal = Refusal::kNoFenceKey,
            .outcome = "bad_request",
            .audit_reason = "no_fence_key"});
    return;
  }
  if (ResourcesNamedInBody()) {
    ForwardWithResourceFence();
    return;
  }
  if (!CheckTokenSignature()) return;
  switch (RouteByShard(fields)) {
    case ShardStep::kAdmitHere:
      Admit();
      return;
    case ShardStep::kForwardToOwner:
      Forward();
      return;
    case ShardStep::kRefused:
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
    problem.fence_key = fenced_.fence_key();
    problem.presented_token = fenced_.token();
    if (DisclosesHighestToken()) problem.highest_token = fenced_.highest();
  }
  if (refusal.refusal == Refusal::kStaleToken && fenced_.token()) ExplainStaleToken(&problem);
  RespondWithProblem(problem, refusal.close, refusal.retry_after ? 1 : 0, refusal.www_authenticate);
}

bool Session::DisclosesHighestToken() const {
  switch (exchange_.route->config->disclose_highest_token) {
    case HighestTokenDisclosure::kAlways:
      return true;
    case HighestTokenDisclosure::kAuthenticated: {
      if (exchange_.auth.guarded) return !exchange_.auth.refused;
      // An open route checked no credentials: a client that sent a principal's is asked now,
      // on the refusal path only.
      const auto& request = parser_->get();
      const std::size_t fields = request.count(http::field::authorization);
      std::string_view authorization;
      if (fields != 0) authorization = request[http::field::authorization];
      return generation_.authorizer->Authenticates(authorization, fields, ClientIdentity());
    }
    case HighestTokenDisclosure::kNever:
      return false;
  }
  return false;
}

void Session::ExplainStaleToken(ProblemDetails* problem) {
  // The refusal path only: a lookup in the lock table's memory, under its mutex.
  const lockstore::StaleTokenExplanation explanation =
      context_.lock_table != nullptr
          ? context_.lock_table->ExplainStaleToken(fenced_.fence_key(), *fenced_.token())
          : lockstore::StaleTokenExplanation{};
  exchange_.stale_reason = lockstore::StaleReasonName(explanation.reason);
  problem->stale_reason = exchange_.stale_reason;
  if (explanation.audit_id != 0) problem->audit_id = explanation.audit_id;
}

void Session::RefuseUnreadable(Refusal refusal, std::string_view detail) {
  Refuse({.refusal = refusal, .detail = detail, .outcome = "bad_request", .close = true});
}

void Session::RecordRejection(const RefusalReply& refusal) {
  if (refusal.rejection) exchange_.route->metrics->CountRejection(*refusal.rejection);
  lockstore::RejectionRecord record;
  record.at_ms = NowUnixMs();
  record.route = exchange_.route->config->name;
  record.fence_key = fenced_.fence_key();
  record.method = parser_->get().method_string();
  record.path = RequestPath();
  record.request_id = exchange_.request_id;
  record.trace_id = exchange_.trace.trace_id();
  record.reason =
      refusal.rejection ? RejectionReasonName(*refusal.rejection) : refusal.audit_reason;
  record.has_presented = fenced_.token().has_value();
  record.presented = fenced_.token().value_or(0);
  record.highest = fenced_.highest().value_or(0);
  // Who sent it, for operators hunting a zombie: read here, on the refusal path only.
  record.client = client_ip_;
  if (exchange_.auth.guarded && !exchange_.auth.refused) {
    record.principal = generation_.authorizer->principal_name(exchange_.auth.principal);
  }
  const std::string_view user_agent = parser_->get()[http::field::user_agent];
  record.user_agent = CutAtCharacter(user_agent, kMaxRecordedUserAgent);
  if (context_.refusal_tops != nullptr) context_.refusal_tops->Count(record.fence_key, client_ip_);
  if (context_.events != nullptr) context_.events->PublishRejection(record);
  context_.store->RecordRejection(std::move(record));
}

void Session::RespondWithRefusal(Refusal refusal, std::string_view detail, bool close) {
  ProblemDetails problem = RefusalProblem(refusal, detail);
  problem.instance = RequestPath();
  problem.request_id = exchange_.request_id;
  RespondWithProblem(problem, close, /*retry_after_seconds=*/0);
}

void Session::RespondWithProblem(const ProblemDetails& problem, bool close,
                                 std::uint32_t retry_after_seconds,
                                 std::string_view www_authenticate) {
  RenderProblemJson(problem, &problem_body_);
  exchange_.status = problem.status;
  exchange_.refusal = problem.slug;
  if (close) exchange_.close_after = true;
  response_.base() = adapters::ResponseHeader{};
  response_.result(problem.status);
  response_.set(http::field::content_type, kProblemContentType);
  response_.content_length(problem_body_.size());
  if (retry_after_seconds == 1) {
    response_.set(http::field::retry_after, "1");
  } else if (retry_after_seconds > 1) {
    response_.set(http::field::retry_after, std::to_string(retry_after_seconds));
  }
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
  stream_.expires_after(generation_.config.timeouts.body_read);
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
    log_line = thread_.error_log_cap().Admit(client_ip_, fenced_.fence_key(),
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
    entry.fence_key = fenced_.fence_key();
    entry.presented_token = fenced_.token();
    entry.highest_token = fenced_.highest();
    entry.outcome = exchange_.outcome;
    entry.upstream_status = exchange_.upstream_status;
    entry.duration_ms = duration * 1000.0;
    entry.barrier_wait_ms =
        std::chrono::duration<double, std::milli>(fenced_.barrier_wait()).count();
    entry.bytes_in = exchange_.bytes_in;
    entry.bytes_out = exchange_.bytes_out;
    entry.client = client_ip_;
    entry.user_agent = user_agent_;
    if (exchange_.auth.guarded && !exchange_.auth.refused) {
      entry.principal = generation_.authorizer->principal_name(exchange_.auth.principal);
    }
    entry.refusal = exchange_.refusal;
    entry.stale_reason = exchange_.stale_reason;
    entry.trace_id = exchange_.trace.trace_id();
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
  // A connection closed because a reload superseded its configuration lingers too: a request
  // the client sent before it read Connection: close must not turn into a reset.
  if ((parser_ && parser_->is_header_done() && !parser_->is_done()) ||
      !thread_.IsCurrent(generation_view_)) {
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
