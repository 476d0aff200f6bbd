#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include <boost/beast/http/error.hpp>

#include "gateway/http/refusal.h"
#include "gateway/observability/metrics.h"
#include "gateway/session/refusal_reply.h"
#include "lockstore/fence/admission.h"
#include "lockstore/tokens/token.h"
#include "resource_adapters/adapter.h"

namespace fencegate::gateway {

// What the session does next with a decided admission.
struct AdmissionStep {
  enum class Kind {
    kProceed,            // admitted, Complete() is owed: the idempotency step, then forward
    kRefuse,             // answer `refusal` (counted and audited)
    kVerifyTokenLive,    // too far ahead on a route with verify_tokens: ask the lock service
    kRefuseTooFarAhead,  // too far ahead and nothing can vouch for the token (README "Tokens")
    kRefuseAdvance,      // the route's policy grants this principal no advance of the fence
  };
  Kind kind = Kind::kProceed;
  RefusalReply refusal{};  // kRefuse
};

// What the session knows of a finished forward besides the adapter's outcome.
struct ForwardFacts {
  bool self_fenced = false;  // the write's shard stopped being this replica's meanwhile
  bool to_peer = false;      // relayed to the shard's owner through a peer adapter
  bool body_done = false;    // the request body was read whole: the connection's framing holds
};

// What the session answers once the backend exchange is over.
struct ForwardAnswer {
  enum class Kind {
    kFinish,            // the response went out, or nobody is left to answer: finish
    kRefuseSelfFenced,  // the shard stopped being ours before a response began
    kRefuse,            // `refusal`, counted and audited like the admission refusals
    kRespond,           // the gateway's own answer: `refusal`'s problem, detail and close only
    kRelayProblem,      // answer the adapter's problem document
  };
  Kind kind = Kind::kFinish;
  std::string_view outcome{};  // the request's outcome from here on; empty: as it was
  bool close = false;          // kFinish: the connection cannot be reused
  RefusalReply refusal{};      // kRefuse, kRespond
  // kRelayProblem: the backend holds a higher token than the one presented (a write that got
  // past this gateway's fence, e.g. through another gateway): a stale write, audited as such.
  bool backend_fence = false;
  std::optional<UpstreamErrorKind> upstream_error{};  // to count on the route
  bool peer_took_it = false;  // to_peer: the peer answered (a client failure is not the peer's)
};

// One fenced write's side of the fence (README "Fencing rules"), reset for each request: its fence
// key and token, the admission it holds, and the decisions of the pipeline admit -> forward ->
// complete as values. The session does the I/O, counts and answers; this holds what the fence
// was told and decides what follows. Every admitted write is completed exactly once, also when
// its decision came after the client was answered with a barrier timeout.
class FencedWrite {
 public:
  // `admission` outlives this (the server's controller; null for sessions that never admit).
  explicit FencedWrite(lockstore::AdmissionController* admission) : admission_(admission) {}
  // One admission, completed once: never copied.
  FencedWrite(const FencedWrite&) = delete;
  FencedWrite& operator=(const FencedWrite&) = delete;

  // A new request: nothing presented, decided or owed. The fence key keeps its capacity.
  void Reset();

  // The fence key, rendered in place from the route's fence_key template.
  std::string& fence_key() { return fence_key_; }
  const std::string& fence_key() const { return fence_key_; }
  const std::optional<lockstore::Token>& token() const { return token_; }
  void set_token(std::optional<lockstore::Token> token) { token_ = token; }
  // The fence's highest token as the last decision (or the backend) reported it.
  const std::optional<lockstore::Token>& highest() const { return highest_; }
  void set_highest(std::optional<lockstore::Token> highest) { highest_ = highest; }
  std::chrono::nanoseconds barrier_wait() const { return barrier_wait_; }
  bool admitted() const { return admitted_; }  // Complete() is owed
  bool abandoned() const { return abandoned_; }
  // timeouts.write_deadline passed while the admitted write still read its body or wrote its
  // response: the client I/O is cut, so the adapter abandons the write and the fence is freed.
  bool write_cut() const { return write_cut_; }
  void CutWrite() { write_cut_ = true; }

  // Asks the fence about writing token() to fence_key() (both set). Returns the decision when
  // it is made at once; otherwise nullopt, and `late` is called exactly once later on a store
  // thread or another network thread, to be handed back to AcceptLateDecision() on this one.
  std::optional<lockstore::AdmissionDecision> Admit(std::string_view request_id,
                                                    std::optional<lockstore::Token> max_advance,
                                                    lockstore::AdmissionController::Callback late);

  // The barrier wait ran out (timeouts.barrier_wait, `waited`): the decision is still owed by
  // the fence but the client gets 503 now. False when it was abandoned already.
  bool AbandonBarrierWait(std::chrono::nanoseconds waited);
  static constexpr RefusalReply kBarrierTimeoutRefusal{
      .refusal = Refusal::kBarrierTimeout,
      .outcome = "barrier_timeout",
      .rejection = RejectionReason::kBarrierTimeout,
      .close = true,
      .retry_after = true,
      .fence_fields = true};

  // A decision that came after Admit() returned nullopt. True: Decide() on it. False: the
  // wait was abandoned and the client answered; an admitted write is completed at once.
  bool AcceptLateDecision(const lockstore::AdmissionDecision& decision);

  // Records `decision` (highest, barrier wait; admitted: Complete() is owed) and says what
  // follows. `advance_forbidden`: the route's policy grants no advance of this fence key;
  // `can_verify_token`: the route asks the lock service about tokens beyond its bound.
  AdmissionStep Decide(const lockstore::AdmissionDecision& decision, bool advance_forbidden,
                       bool can_verify_token);

  // Releases the admission if it is held: true then, false (and nothing done) otherwise.
  bool Complete();

  // What the session answers for a forward that ended with `outcome` (the admission is no
  // longer held). A backend that holds a higher token raises highest().
  ForwardAnswer Answer(const adapters::ForwardOutcome& outcome, const ForwardFacts& facts);

 private:
  lockstore::AdmissionController* admission_;
  std::string fence_key_;
  std::optional<lockstore::Token> token_;
  std::optional<lockstore::Token> highest_;
  std::chrono::nanoseconds barrier_wait_{0};
  bool admitted_ = false;
  bool abandoned_ = false;
  bool write_cut_ = false;
  std::string detail_;  // a refusal's detail that is not a literal (a store or I/O error)
};

// The verdicts are inline: the session calls them once per fenced write.

inline AdmissionStep FencedWrite::Decide(const lockstore::AdmissionDecision& decision,
                                         bool advance_forbidden, bool can_verify_token) {
  using Kind = lockstore::AdmissionDecision::Kind;
  highest_ = decision.highest;
  barrier_wait_ = decision.barrier_wait;
  switch (decision.kind) {
    case Kind::kAdmitted:
      admitted_ = true;
      return {.kind = AdmissionStep::Kind::kProceed};
    case Kind::kStale:
      return {.kind = AdmissionStep::Kind::kRefuse,
              .refusal = {.refusal = Refusal::kStaleToken,
                          .outcome = "stale_token",
                          .rejection = RejectionReason::kStaleToken,
                          .fence_fields = true}};
    case Kind::kTooFarAhead:
      if (advance_forbidden) return {.kind = AdmissionStep::Kind::kRefuseAdvance};
      if (can_verify_token) return {.kind = AdmissionStep::Kind::kVerifyTokenLive};
      return {.kind = AdmissionStep::Kind::kRefuseTooFarAhead};
    case Kind::kRepairing:
      return {.kind = AdmissionStep::Kind::kRefuse,
              .refusal = {.refusal = Refusal::kFenceRepairInProgress,
                          .outcome = "fence_repair",
                          .rejection = RejectionReason::kFenceRepair,
                          .retry_after = true,
                          .fence_fields = true}};
    case Kind::kStoreError:
      detail_ = decision.status.ToString();
      return {.kind = AdmissionStep::Kind::kRefuse,
              .refusal = {.refusal = Refusal::kStoreError,
                          .detail = detail_,
                          .outcome = "store_error",
                          .rejection = RejectionReason::kStoreError,
                          .retry_after = true,
                          .fence_fields = true}};
  }
  return {.kind = AdmissionStep::Kind::kRefuse};
}

inline ForwardAnswer FencedWrite::Answer(const adapters::ForwardOutcome& outcome,
                                         const ForwardFacts& facts) {
  using Failure = adapters::ForwardOutcome::Failure;
  ForwardAnswer answer;
  answer.peer_took_it = outcome.failure == Failure::kNone || outcome.failure == Failure::kClient;
  const bool started = outcome.response_started;
  if (facts.self_fenced && !started) {
    answer.kind = ForwardAnswer::Kind::kRefuseSelfFenced;
    return answer;
  }
  if (write_cut_ && !started && outcome.failure == Failure::kClient) {
    answer.kind = ForwardAnswer::Kind::kRespond;
    answer.outcome = "write_deadline";
    answer.refusal = {.refusal = Refusal::kWriteDeadlineExceeded, .close = true};
    return answer;
  }
  if (facts.to_peer && !started && outcome.failure == Failure::kUpstreamConnect) {
    // The owner is gone (crashed, stopping): its shards move after its lease and a quarantine.
    answer.kind = ForwardAnswer::Kind::kRefuse;
    answer.refusal = {
        .refusal = Refusal::kShardUnavailable,
        .detail = "the replica that owns this fence key's shard cannot be reached; retry",
        .outcome = "shard_unavailable",
        .audit_reason = "shard_unavailable",
        .close = !facts.body_done,
        .retry_after = true};
    return answer;
  }
  switch (outcome.failure) {
    case Failure::kUpstreamConnect:
      answer.upstream_error = UpstreamErrorKind::kConnect;
      break;
    case Failure::kUpstreamTimeout:
      answer.upstream_error = UpstreamErrorKind::kTimeout;
      break;
    case Failure::kUpstreamProtocol:
      answer.upstream_error = UpstreamErrorKind::kProtocol;
      break;
    case Failure::kBackendIO:
      answer.upstream_error = UpstreamErrorKind::kBackendIO;
      break;
    case Failure::kNone:
    case Failure::kClient:
      break;
  }
  if (answer.upstream_error) answer.outcome = "upstream_error";

  if (started) {
    answer.close = !outcome.response_complete || !facts.body_done;
    return answer;
  }
  if (outcome.problem) {
    answer.kind = ForwardAnswer::Kind::kRelayProblem;
    if (outcome.problem->type == adapters::kStaleAtBackendProblemType) {
      answer.backend_fence = true;
      answer.outcome = "backend_fence";
      if (outcome.backend_stale_token) highest_ = *outcome.backend_stale_token;
    }
    return answer;
  }
  answer.kind = ForwardAnswer::Kind::kRespond;
  switch (outcome.failure) {
    case Failure::kClient:
      if (outcome.error == boost::beast::http::error::body_limit) {
        answer.refusal = {.refusal = Refusal::kBodyTooLarge, .close = true};
        return answer;
      }
      // The client is gone or broke framing: there is nobody to answer.
      answer.kind = ForwardAnswer::Kind::kFinish;
      answer.close = true;
      return answer;
    case Failure::kUpstreamTimeout:
      answer.refusal = {.refusal = Refusal::kUpstreamTimeout};
      return answer;
    case Failure::kBackendIO:
      detail_ = outcome.error.message();
      answer.refusal = {.refusal = Refusal::kBackendIoError, .detail = detail_};
      return answer;
    case Failure::kUpstreamConnect:
      answer.refusal = {.refusal = Refusal::kBadGateway,
                        .detail = "could not connect to the backend"};
      return answer;
    case Failure::kUpstreamProtocol:
    case Failure::kNone:
      answer.refusal = {.refusal = Refusal::kBadGateway,
                        .detail = "the backend did not send a valid HTTP response"};
      return answer;
  }
  return answer;
}

}  // namespace fencegate::gateway
