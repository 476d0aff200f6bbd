// The fenced-write pipeline of a Session, as FencedWrite (fenced_write.h) decides it:
// admission at the fence (lockstore/fence/admission.h) with its barrier wait, the write
// deadline of an admitted write, forwarding through the route's adapter, and what the session
// answers when the backend exchange ends. The fence is released (CompleteAdmission) as soon as
// the backend exchange is over.
#include "base/net/deadline_clock.h"
#include "gateway/cluster/replica_cluster.h"
#include "gateway/http/header_sanitizer.h"
#include "gateway/http/time_format.h"
#include "gateway/server/network_thread.h"
#include "gateway/session/backend_failure_log.h"
#include "gateway/session/session.h"
#include "lockstore/locks/token_signer.h"

namespace fencegate::gateway {
using boost::system::error_code;
namespace {

constexpr std::string_view kBackendFenceUndisclosedDetail =
    "the backend already stores a higher fencing token for this resource than the one presented";

}  // namespace

void Session::Admit() {
  self_hold_ = shared_from_this();
  auto decision = fenced_.Admit(exchange_.request_id, AdmitBound(),
                                [this](const lockstore::AdmissionDecision& late) {
                                  // On a store thread or another network thread: hop back to this
                                  // session's thread.
                                  thread_.decisions().Deliver(this, late);
                                });
  if (decision) {
    self_hold_.reset();
    OnAdmissionDecision(*decision);
    return;
  }
  barrier_deadline_.Begin(
      std::chrono::steady_clock::now() + generation_.config.timeouts.barrier_wait, self_hold_);
}

bool Session::ResourcesNamedInBody() {
  return generation_view_.adapter(exchange_.route->backend_index)
      .NamesResourcesInBody(parser_->get());
}

void Session::ForwardWithResourceFence() {
  if (context_.cluster != nullptr) {
    // Its keys may belong to several replicas' shards, and no replica admits another's.
    Refuse({.refusal = Refusal::kResourcesInBodyWithReplicas,
            .outcome = "bad_request",
            .audit_reason = "resources_in_body"});
    return;
  }
  resource_fence_.Begin(
      {.admission = context_.admission,
       .fence_key = &exchange_.route->config->fence_key,
       .host = host_lower_,
       .route = exchange_.route->config->name,
       .token = *fenced_.token(),
       .request_id = exchange_.request_id,
       .disclose_highest_token = DisclosesHighestToken(),
       .policy = [this](std::string_view key) { return ResourceKeyPolicy(key); },
       // Weak: the session holds this fence. While a verdict is owed the forward's self_hold_
       // keeps the session alive, and a posted run keeps it too.
       .post =
           [weak = weak_from_this()](std::function<void()> run) {
             if (auto self = weak.lock()) {
               self->thread_.inbox().Post([self, run = std::move(run)] { run(); });
             }
           }});
  exchange_.outcome = "admitted";
  Proceed();
}

// The checks the session's own admission makes for its one key, made for each resource.
ResourceFenceAdmission::KeyPolicy Session::ResourceKeyPolicy(std::string_view key) {
  const auto problem = [](Refusal refusal, std::string_view detail = {}) {
    const RefusalRow& row = RefusalText(refusal);
    return adapters::Problem{row.status, std::string(row.slug), std::string(row.title),
                             std::string(detail.empty() ? row.detail : detail)};
  };
  ResourceFenceAdmission::KeyPolicy policy;
  const auto& request = parser_->get();
  const RouteConfig& route = *exchange_.route->config;
  const std::size_t signatures = request.count(lockstore::kTokenSignatureField);
  bool token_signed = false;
  if (signatures == 0 && route.require_signed_tokens) {
    policy.refused = problem(Refusal::kUnsignedToken);
    return policy;
  }
  if (signatures > 0 && context_.token_signer != nullptr) {
    if (signatures > 1) {
      policy.refused = problem(Refusal::kInvalidTokenSignature,
                               "the Fencing-Token-Signature field must appear once");
      return policy;
    }
    switch (context_.token_signer->Verify(request.find(lockstore::kTokenSignatureField)->value(),
                                          *fenced_.token(), key, NowUnixMs())) {
      case lockstore::SignatureCheck::kValid:
        token_signed = true;
        break;
      case lockstore::SignatureCheck::kMalformed:
        policy.refused = problem(Refusal::kInvalidTokenSignature);
        return policy;
      case lockstore::SignatureCheck::kForged:
        policy.refused = problem(Refusal::kForgedToken);
        return policy;
      case lockstore::SignatureCheck::kExpired:
        policy.refused = problem(Refusal::kExpiredToken);
        return policy;
      case lockstore::SignatureCheck::kWrongScope:
        policy.refused =
            problem(Refusal::kTokenScopeMismatch,
                    "the signing lock's fence_keys do not include " + std::string(key));
        return policy;
    }
  }
  policy.advance_forbidden = !generation_.authorizer->MayAdvance(
      exchange_.route - generation_.routes.data(), exchange_.auth, key);
  if (policy.advance_forbidden) {
    policy.max_advance = lockstore::Token{0};
  } else if (!token_signed && route.max_token_advance != 0) {
    policy.max_advance = route.max_token_advance;
  }
  return policy;
}

void Session::OnLateAdmissionDecision(const lockstore::AdmissionDecision& decision) {
  const auto self = std::move(self_hold_);
  barrier_deadline_.End();
  if (!fenced_.AcceptLateDecision(decision)) return;
  OnAdmissionDecision(decision);
}

void Session::OnFenceDeadline() {
  if (fenced_.admitted()) {
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
  fenced_.CutWrite();
  error_code ignored;
  stream_.socket().cancel(ignored);
}

void Session::OnBarrierTimeout() {
  if (phase_ != Phase::kAdmitting || !self_hold_) return;
  if (!fenced_.AbandonBarrierWait(generation_.config.timeouts.barrier_wait)) return;
  exchange_.route->metrics->barrier_wait->Observe(
      thread_.index(), std::chrono::duration<double>(fenced_.barrier_wait()).count());
  Refuse(FencedWrite::kBarrierTimeoutRefusal);
}

void Session::OnAdmissionDecision(const lockstore::AdmissionDecision& decision) {
  const AdmissionStep step = fenced_.Decide(decision, exchange_.advance_forbidden,
                                            exchange_.route->token_verifier != nullptr);
  switch (step.kind) {
    case AdmissionStep::Kind::kProceed: {
      if (SelfFenced()) {
        // The shard stopped being ours while the advance was made durable: send nothing.
        CompleteAdmission();
        RefuseSelfFenced();
        return;
      }
      exchange_.outcome = "admitted";
      barrier_deadline_.Begin(
          adapters::DeadlineClock::Now() + generation_.config.timeouts.write_deadline, *this);
      const RouteMetrics& metrics = *exchange_.route->metrics;
      metrics.writes_admitted->Increment();
      if (decision.advanced) metrics.fence_advances->Increment();
      metrics.barrier_wait->Observe(thread_.index(),
                                    std::chrono::duration<double>(decision.barrier_wait).count());
      Proceed();
      return;
    }
    case AdmissionStep::Kind::kRefuse:
      Refuse(step.refusal);
      return;
    case AdmissionStep::Kind::kVerifyTokenLive:
      VerifyTokenLive();
      return;
    case AdmissionStep::Kind::kRefuseTooFarAhead:
      RefuseToken(TokenRefusal::kTooFarAhead);
      return;
    case AdmissionStep::Kind::kRefuseAdvance:
      RefuseAdvance();
      return;
  }
}

void Session::Forward() {
  phase_ = Phase::kForwarding;
  auto& request = parser_->get();
  SanitizeRequestHeader(
      request, {client_ip_, exchange_.request_id, tls_established_, exchange_.trace.generated()},
      &scratch_);
  adapters::ForwardRequest forward;
  forward.header = &request;
  forward.route_prefix = exchange_.route->config->prefix;
  if (fenced_.admitted() || exchange_.peer_adapter || resource_fence_.engaged()) {
    forward.fencing_token = *fenced_.token();
  }
  if (resource_fence_.engaged()) forward.resource_fence = &resource_fence_;
  forward.fence_key = fenced_.fence_key();
  forward.request_id = exchange_.request_id;
  self_hold_ = shared_from_this();
  generation_view_.adapter(exchange_.peer_adapter.value_or(exchange_.route->backend_index))
      .Forward(forward, *this,
               [this](adapters::ForwardOutcome outcome) { OnForwardDone(std::move(outcome)); });
}

void Session::CompleteAdmission() {
  resource_fence_.CompleteAll();
  if (!fenced_.admitted()) return;
  barrier_deadline_.End();
  fenced_.Complete();
}

void Session::OnForwardDone(adapters::ForwardOutcome outcome) {
  const auto self = std::move(self_hold_);
  // The backend exchange is over, whatever the client side still needs: release the fence.
  CompleteAdmission();
  // The backend's share of the request's time: one shard of this thread, no lock.
  if (outcome.upstream_time.count() > 0 && !exchange_.peer_adapter &&
      exchange_.route->upstream_duration != nullptr) {
    exchange_.route->upstream_duration->Observe(
        thread_.index(), std::chrono::duration<double>(outcome.upstream_time).count());
  }
  if (outcome.failure != adapters::ForwardOutcome::Failure::kNone && !exchange_.peer_adapter) {
    const RouteConfig& route = *exchange_.route->config;
    const auto backend = generation_.config.backends.find(route.backend);
    if (backend != generation_.config.backends.end()) {
      LogBackendFailure(backend->second, route.name, outcome);
    }
  }
  if (idempotency_.claimed()) {
    // A retry sent after this answer must find the key settled: answer once it is durable.
    SettleIdempotency(std::move(outcome));
    return;
  }
  exchange_.upstream_status = outcome.upstream_status;
  const ForwardAnswer answer =
      fenced_.Answer(outcome, {.self_fenced = exchange_.self_fenced,
                               .to_peer = exchange_.peer_adapter.has_value(),
                               .body_done = parser_->is_done()});
  if (exchange_.peer_adapter) context_.cluster->CountForward(answer.peer_took_it);
  if (answer.upstream_error) exchange_.route->metrics->CountUpstreamError(*answer.upstream_error);
  if (!answer.outcome.empty()) exchange_.outcome = answer.outcome;
  if (answer.close) exchange_.close_after = true;
  if (!outcome.response_started) phase_ = Phase::kResponding;
  switch (answer.kind) {
    case ForwardAnswer::Kind::kFinish:
      FinishRequest();
      return;
    case ForwardAnswer::Kind::kRefuseSelfFenced:
      RefuseSelfFenced();
      return;
    case ForwardAnswer::Kind::kRefuse:
      Refuse(answer.refusal);
      return;
    case ForwardAnswer::Kind::kRespond:
      RespondWithRefusal(answer.refusal.refusal, answer.refusal.detail, answer.refusal.close);
      return;
    case ForwardAnswer::Kind::kRelayProblem:
      RelayProblem(*outcome.problem, answer.backend_fence, outcome.backend_stale_token.has_value());
      return;
  }
}

// The adapter's problem document, answered by the gateway. A stale write at the backend is
// counted and audited like the gateway's own refusals.
void Session::RelayProblem(const adapters::Problem& problem, bool backend_fence,
                           bool backend_reported_highest) {
  // The adapter's problem goes before the access log is written: its slug is kept here.
  relayed_slug_.assign(problem.type);
  ProblemDetails details{.status = problem.status,
                         .slug = relayed_slug_,
                         .title = problem.title,
                         .detail = problem.detail,
                         .instance = RequestPath(),
                         .request_id = exchange_.request_id};
  if (problem.type == adapters::kStaleAtGatewayProblemType && resource_fence_.engaged()) {
    // A resource the body named is stale at this gateway's fence: the refusal names its key.
    exchange_.outcome = "stale_token";
    fenced_.fence_key() = resource_fence_.stale_key();
    fenced_.set_highest(resource_fence_.stale_highest());
    RecordRejection({.rejection = RejectionReason::kStaleToken});
    details.reason = RejectionReasonName(RejectionReason::kStaleToken);
    details.fence_key = fenced_.fence_key();
    details.presented_token = fenced_.token();
    if (DisclosesHighestToken()) details.highest_token = fenced_.highest();
    ExplainStaleToken(&details);
  } else if (backend_fence && resource_fence_.engaged()) {
    // Keys the body named: the adapter's detail lists them, with tokens only where disclosed.
    // The request's own path names no resource it writes: the record has no fence key.
    fenced_.fence_key().clear();
    RecordRejection({.rejection = RejectionReason::kBackendFence});
    details.reason = RejectionReasonName(RejectionReason::kBackendFence);
    details.presented_token = fenced_.token();
  } else if (backend_fence) {
    RecordRejection({.rejection = RejectionReason::kBackendFence});
    details.reason = RejectionReasonName(RejectionReason::kBackendFence);
    details.fence_key = fenced_.fence_key();
    details.presented_token = fenced_.token();
    if (!DisclosesHighestToken()) {
      // The adapters' details name the stored token: say the same without the number.
      details.detail = kBackendFenceUndisclosedDetail;
    } else if (backend_reported_highest) {
      details.highest_token = fenced_.highest();
    }
  }
  RespondWithProblem(details, false, problem.retry_after ? problem.retry_after_seconds : 0);
}

}  // namespace fencegate::gateway
