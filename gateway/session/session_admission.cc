// The fenced-write pipeline of a Session: admission at the fence (lockstore/fence/admission.h)
// with its barrier wait, the write deadline of an admitted write, forwarding through the
// route's adapter, and what the session answers when the backend exchange ends. The fence is
// released (CompleteAdmission) as soon as the backend exchange is over.
#include <boost/beast/http/error.hpp>

#include "base/net/deadline_clock.h"
#include "gateway/cluster/replica_cluster.h"
#include "gateway/http/header_sanitizer.h"
#include "gateway/server/network_thread.h"
#include "gateway/session/session.h"

namespace fencegate::gateway {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;

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

}  // namespace fencegate::gateway
