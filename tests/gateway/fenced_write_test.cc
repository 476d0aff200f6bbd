#include "gateway/session/fenced_write.h"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>

#include "lockstore/fence/memory_fence_store.h"
#include "tests/lockstore/admission_test_support.h"

#include <gtest/gtest.h>

namespace fencegate::gateway {
namespace {

using DecisionKind = lockstore::AdmissionDecision::Kind;
using StepKind = AdmissionStep::Kind;
using AnswerKind = ForwardAnswer::Kind;
using Failure = adapters::ForwardOutcome::Failure;
using lockstore::Token;
using lockstore::testing::Decisions;
using lockstore::testing::Unexpected;

constexpr std::string_view kKey = "kv:r1";

// A decision as the controller would make it, for the verdicts that need no fence behind them.
lockstore::AdmissionDecision Decision(DecisionKind kind, Token highest) {
  lockstore::AdmissionDecision decision;
  decision.kind = kind;
  decision.highest = highest;
  return decision;
}

// FencedWrite against a real AdmissionController over a memory fence store whose advances
// wait for RunPending(), so each test decides when the durable advance lands.
class FencedWriteTest : public ::testing::Test {
 protected:
  FencedWriteTest() : controller_(store_, ControllerOptions()) {}

  static lockstore::AdmissionOptions ControllerOptions() {
    lockstore::AdmissionOptions options;
    options.now_ms = [] { return std::int64_t{1000}; };
    return options;
  }

  void SetUp() override {
    // The fence of kKey stands at 5, with nothing in flight.
    store_.SetDeferred(true);
    Decisions decisions;
    ASSERT_FALSE(controller_.Admit(kKey, 5, "setup", decisions.Callback()).has_value());
    store_.RunPending();
    ASSERT_EQ(decisions.size(), 1u);
    ASSERT_EQ(decisions.received()[0].kind, DecisionKind::kAdmitted);
    controller_.Complete(kKey, 5);
  }

  // A write of `token` to kKey, as the session prepares it before admission.
  void Prepare(FencedWrite& write, Token token) {
    write.fence_key() = kKey;
    write.set_token(token);
  }

  std::uint64_t WritesInFlight() { return controller_.Inspect(kKey)->writes_in_flight; }

  lockstore::MemoryFenceStore store_;
  lockstore::AdmissionController controller_;
};

TEST_F(FencedWriteTest, AdmittedWriteProceedsAndCompletesExactlyOnce) {
  FencedWrite first(&controller_);
  Prepare(first, 5);
  const auto decision = first.Admit("r1", std::nullopt, Unexpected());
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(first.Decide(*decision, false, false).kind, StepKind::kProceed);
  EXPECT_TRUE(first.admitted());
  EXPECT_EQ(first.highest(), Token{5});
  EXPECT_EQ(WritesInFlight(), 1u);

  // A newer token waits at the advance barrier while 5 is admitted.
  FencedWrite newer(&controller_);
  Prepare(newer, 6);
  Decisions late;
  EXPECT_FALSE(newer.Admit("r2", std::nullopt, late.Callback()).has_value());
  store_.RunPending();
  EXPECT_EQ(late.size(), 0u) << "6 admitted while the write with 5 was in flight";

  EXPECT_TRUE(first.Complete());
  EXPECT_FALSE(first.admitted());
  ASSERT_EQ(late.size(), 1u);
  const lockstore::AdmissionDecision newer_decision = late.received()[0];
  EXPECT_TRUE(newer.AcceptLateDecision(newer_decision));
  EXPECT_EQ(newer.Decide(newer_decision, false, false).kind, StepKind::kProceed);
  EXPECT_TRUE(newer.admitted());
  EXPECT_EQ(newer.highest(), Token{6});

  // A second Complete() releases nothing: the newer write is still the one in flight.
  EXPECT_FALSE(first.Complete());
  EXPECT_EQ(WritesInFlight(), 1u);
  EXPECT_TRUE(newer.Complete());
  EXPECT_EQ(WritesInFlight(), 0u);
}

TEST_F(FencedWriteTest, StaleTokenIsRefusedWithTheHighest) {
  FencedWrite write(&controller_);
  Prepare(write, 4);
  const auto decision = write.Admit("r1", std::nullopt, Unexpected());
  ASSERT_TRUE(decision.has_value());
  const AdmissionStep step = write.Decide(*decision, false, false);
  ASSERT_EQ(step.kind, StepKind::kRefuse);
  EXPECT_EQ(step.refusal.refusal, Refusal::kStaleToken);
  EXPECT_EQ(RefusalText(step.refusal.refusal).status, 409u);
  EXPECT_EQ(step.refusal.outcome, "stale_token");
  EXPECT_EQ(step.refusal.rejection, RejectionReason::kStaleToken);
  EXPECT_TRUE(step.refusal.fence_fields);
  EXPECT_FALSE(step.refusal.retry_after);
  EXPECT_FALSE(step.refusal.close);
  EXPECT_EQ(write.highest(), Token{5});
  EXPECT_FALSE(write.admitted());
  EXPECT_FALSE(write.Complete());
  EXPECT_EQ(WritesInFlight(), 0u);
}

TEST_F(FencedWriteTest, TooFarAheadIsVerifiedLiveOrRefusedAndLeavesTheFence) {
  FencedWrite write(&controller_);
  Prepare(write, 100);
  const auto decision = write.Admit("r1", Token{10}, Unexpected());
  ASSERT_TRUE(decision.has_value());
  ASSERT_EQ(decision->kind, DecisionKind::kTooFarAhead);
  EXPECT_EQ(write.Decide(*decision, false, false).kind, StepKind::kRefuseTooFarAhead);
  EXPECT_EQ(write.Decide(*decision, false, true).kind, StepKind::kVerifyTokenLive);
  // A principal that may not advance the fence is refused for that, verifier or not.
  EXPECT_EQ(write.Decide(*decision, true, true).kind, StepKind::kRefuseAdvance);
  EXPECT_EQ(write.Decide(*decision, true, false).kind, StepKind::kRefuseAdvance);
  EXPECT_FALSE(write.admitted());
  EXPECT_EQ(write.highest(), Token{5});
  EXPECT_EQ(controller_.Inspect(kKey)->durable.highest, 5u);
  EXPECT_EQ(controller_.Inspect(kKey)->pending_advance, 0u);
}

TEST_F(FencedWriteTest, NoAdvanceAllowedStillAdmitsAWriteAtTheHighest) {
  // AdmitBound() is 0 when the policy grants no advance.
  FencedWrite advancing(&controller_);
  Prepare(advancing, 6);
  const auto refused = advancing.Admit("r1", Token{0}, Unexpected());
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(advancing.Decide(*refused, true, false).kind, StepKind::kRefuseAdvance);

  FencedWrite at_highest(&controller_);
  Prepare(at_highest, 5);
  const auto admitted = at_highest.Admit("r2", Token{0}, Unexpected());
  ASSERT_TRUE(admitted.has_value());
  EXPECT_EQ(at_highest.Decide(*admitted, true, false).kind, StepKind::kProceed);
  EXPECT_TRUE(at_highest.Complete());
  EXPECT_EQ(WritesInFlight(), 0u);
}

TEST_F(FencedWriteTest, LateDecisionAfterAnAbandonedWaitCompletesTheFence) {
  FencedWrite write(&controller_);
  Prepare(write, 6);
  Decisions late;
  EXPECT_FALSE(write.Admit("r1", std::nullopt, late.Callback()).has_value());

  // timeouts.barrier_wait ran out: the client gets the barrier-timeout refusal, once.
  EXPECT_TRUE(write.AbandonBarrierWait(std::chrono::seconds(2)));
  EXPECT_FALSE(write.AbandonBarrierWait(std::chrono::seconds(3)));
  EXPECT_TRUE(write.abandoned());
  EXPECT_EQ(write.barrier_wait(), std::chrono::seconds(2));
  constexpr RefusalReply timeout = FencedWrite::kBarrierTimeoutRefusal;
  EXPECT_EQ(timeout.refusal, Refusal::kBarrierTimeout);
  EXPECT_EQ(RefusalText(timeout.refusal).status, 503u);
  EXPECT_EQ(timeout.outcome, "barrier_timeout");
  EXPECT_EQ(timeout.rejection, RejectionReason::kBarrierTimeout);
  EXPECT_TRUE(timeout.close);
  EXPECT_TRUE(timeout.retry_after);
  EXPECT_TRUE(timeout.fence_fields);

  // The advance lands afterwards: admitted, and released at once with nothing answered.
  store_.RunPending();
  ASSERT_EQ(late.size(), 1u);
  ASSERT_EQ(late.received()[0].kind, DecisionKind::kAdmitted);
  EXPECT_FALSE(write.AcceptLateDecision(late.received()[0]));
  EXPECT_FALSE(write.admitted());
  EXPECT_EQ(WritesInFlight(), 0u);

  // So the next writer is not held at the barrier behind it.
  FencedWrite next(&controller_);
  Prepare(next, 7);
  Decisions next_late;
  EXPECT_FALSE(next.Admit("r2", std::nullopt, next_late.Callback()).has_value());
  store_.RunPending();
  ASSERT_EQ(next_late.size(), 1u);
  EXPECT_EQ(next_late.received()[0].kind, DecisionKind::kAdmitted);
  EXPECT_TRUE(next.AcceptLateDecision(next_late.received()[0]));
  EXPECT_EQ(next.Decide(next_late.received()[0], false, false).kind, StepKind::kProceed);
  EXPECT_TRUE(next.Complete());
}

TEST_F(FencedWriteTest, StoreErrorIsRefusedWithTheStoresMessage) {
  store_.FailNextAdvances(lockstore::Status::IOError("disk full"));
  FencedWrite write(&controller_);
  Prepare(write, 6);
  Decisions late;
  EXPECT_FALSE(write.Admit("r1", std::nullopt, late.Callback()).has_value());
  store_.RunPending();
  ASSERT_EQ(late.size(), 1u);
  const lockstore::AdmissionDecision decision = late.received()[0];
  EXPECT_TRUE(write.AcceptLateDecision(decision));
  const AdmissionStep step = write.Decide(decision, false, false);
  ASSERT_EQ(step.kind, StepKind::kRefuse);
  EXPECT_EQ(step.refusal.refusal, Refusal::kStoreError);
  EXPECT_EQ(RefusalText(step.refusal.refusal).status, 503u);
  EXPECT_EQ(step.refusal.detail, decision.status.ToString());
  EXPECT_NE(step.refusal.detail.find("disk full"), std::string_view::npos);
  EXPECT_EQ(step.refusal.outcome, "store_error");
  EXPECT_EQ(step.refusal.rejection, RejectionReason::kStoreError);
  EXPECT_TRUE(step.refusal.retry_after);
  EXPECT_TRUE(step.refusal.fence_fields);
  EXPECT_FALSE(write.admitted());
  EXPECT_EQ(WritesInFlight(), 0u);
}

TEST(FencedWriteDecisionTest, RepairInProgressIsRefusedForARetry) {
  // A repair being made durable needs a store that holds it (tests/lockstore/fence_repair_test.cc);
  // the verdict only reads the decision.
  FencedWrite write(nullptr);
  const AdmissionStep step = write.Decide(Decision(DecisionKind::kRepairing, 9), false, true);
  ASSERT_EQ(step.kind, StepKind::kRefuse);
  EXPECT_EQ(step.refusal.refusal, Refusal::kFenceRepairInProgress);
  EXPECT_EQ(step.refusal.outcome, "fence_repair");
  EXPECT_EQ(step.refusal.rejection, RejectionReason::kFenceRepair);
  EXPECT_TRUE(step.refusal.retry_after);
  EXPECT_TRUE(step.refusal.fence_fields);
  EXPECT_EQ(write.highest(), Token{9});
  EXPECT_FALSE(write.admitted());
}

TEST(FencedWriteDecisionTest, ResetForgetsTheWriteAndKeepsTheKeysCapacity) {
  FencedWrite write(nullptr);
  write.fence_key() = std::string(200, 'k');
  const std::size_t capacity = write.fence_key().capacity();
  write.set_token(7);
  lockstore::AdmissionDecision stale = Decision(DecisionKind::kStale, 8);
  stale.barrier_wait = std::chrono::milliseconds(3);
  (void)write.Decide(stale, false, false);
  EXPECT_TRUE(write.AbandonBarrierWait(std::chrono::seconds(1)));
  write.CutWrite();
  write.Reset();
  EXPECT_TRUE(write.fence_key().empty());
  EXPECT_EQ(write.fence_key().capacity(), capacity);
  EXPECT_FALSE(write.token().has_value());
  EXPECT_FALSE(write.highest().has_value());
  EXPECT_EQ(write.barrier_wait(), std::chrono::nanoseconds{0});
  EXPECT_FALSE(write.admitted());
  EXPECT_FALSE(write.abandoned());
  EXPECT_FALSE(write.write_cut());
}

// ---- What the session answers when the backend exchange is over ----

struct ForwardCase {
  std::string_view name;
  adapters::ForwardOutcome outcome;
  ForwardFacts facts;
  bool write_cut = false;
  AnswerKind kind;
  std::optional<Refusal> refusal = std::nullopt;  // kRefuse, kRespond
  unsigned status = 0;                            // the refusal's status
  std::string_view detail{};
  std::string_view outcome_name{};  // the request's outcome from here; empty: as it was
  bool close = false;               // kFinish: the answer's; kRefuse, kRespond: the refusal's
  std::optional<UpstreamErrorKind> upstream_error = std::nullopt;
  bool peer_took_it = true;
};

adapters::ForwardOutcome Relayed(Failure failure = Failure::kNone, bool complete = true) {
  adapters::ForwardOutcome outcome;
  outcome.failure = failure;
  outcome.response_started = true;
  outcome.response_complete = complete;
  return outcome;
}

adapters::ForwardOutcome Failed(Failure failure,
                                boost::system::error_code error = boost::system::error_code()) {
  adapters::ForwardOutcome outcome;
  outcome.failure = failure;
  outcome.error = error;
  return outcome;
}

constexpr ForwardFacts kHere{.body_done = true};
constexpr ForwardFacts kHereBodyUnread{.body_done = false};
constexpr ForwardFacts kToPeer{.to_peer = true, .body_done = true};
constexpr ForwardFacts kSelfFenced{.self_fenced = true, .body_done = false};

const boost::system::error_code kNoSpace = make_error_code(boost::system::errc::no_space_on_device);
// The detail of a backend I/O error is the error's own text.
const std::string kNoSpaceMessage = kNoSpace.message();

std::vector<ForwardCase> ForwardCases() {
  return {
      {.name = "relayed whole", .outcome = Relayed(), .facts = kHere, .kind = AnswerKind::kFinish},
      {.name = "relayed, response cut short",
       .outcome = Relayed(Failure::kNone, false),
       .facts = kHere,
       .kind = AnswerKind::kFinish,
       .close = true},
      {.name = "relayed, request body left unread",
       .outcome = Relayed(),
       .facts = kHereBodyUnread,
       .kind = AnswerKind::kFinish,
       .close = true},
      {.name = "backend timed out mid-response",
       .outcome = Relayed(Failure::kUpstreamTimeout, false),
       .facts = kHere,
       .kind = AnswerKind::kFinish,
       .outcome_name = "upstream_error",
       .close = true,
       .upstream_error = UpstreamErrorKind::kTimeout,
       .peer_took_it = false},
      {.name = "self-fenced before a response",
       .outcome = Failed(Failure::kUpstreamConnect),
       .facts = kSelfFenced,
       .kind = AnswerKind::kRefuseSelfFenced,
       .peer_took_it = false},
      {.name = "self-fenced after the response began",
       .outcome = Relayed(),
       .facts = {.self_fenced = true, .body_done = true},
       .kind = AnswerKind::kFinish},
      {.name = "write deadline cut the client side",
       .outcome = Failed(Failure::kClient, make_error_code(boost::beast::error::timeout)),
       .facts = kHereBodyUnread,
       .write_cut = true,
       .kind = AnswerKind::kRespond,
       .refusal = Refusal::kWriteDeadlineExceeded,
       .status = 408,
       .outcome_name = "write_deadline",
       .close = true},
      {.name = "write deadline passed, the backend timed out",
       .outcome = Failed(Failure::kUpstreamTimeout),
       .facts = kHere,
       .write_cut = true,
       .kind = AnswerKind::kRespond,
       .refusal = Refusal::kUpstreamTimeout,
       .status = 504,
       .outcome_name = "upstream_error",
       .upstream_error = UpstreamErrorKind::kTimeout,
       .peer_took_it = false},
      {.name = "shard owner unreachable",
       .outcome = Failed(Failure::kUpstreamConnect),
       .facts = kToPeer,
       .kind = AnswerKind::kRefuse,
       .refusal = Refusal::kShardUnavailable,
       .status = 503,
       .detail = "the replica that owns this fence key's shard cannot be reached; retry",
       .outcome_name = "shard_unavailable",
       .peer_took_it = false},
      {.name = "shard owner unreachable, body unread",
       .outcome = Failed(Failure::kUpstreamConnect),
       .facts = {.to_peer = true, .body_done = false},
       .kind = AnswerKind::kRefuse,
       .refusal = Refusal::kShardUnavailable,
       .status = 503,
       .detail = "the replica that owns this fence key's shard cannot be reached; retry",
       .outcome_name = "shard_unavailable",
       .close = true,
       .peer_took_it = false},
      {.name = "shard owner answered",
       .outcome = Relayed(),
       .facts = kToPeer,
       .kind = AnswerKind::kFinish},
      {.name = "shard owner timed out",
       .outcome = Failed(Failure::kUpstreamTimeout),
       .facts = kToPeer,
       .kind = AnswerKind::kRespond,
       .refusal = Refusal::kUpstreamTimeout,
       .status = 504,
       .outcome_name = "upstream_error",
       .upstream_error = UpstreamErrorKind::kTimeout,
       .peer_took_it = false},
      {.name = "request body over the limit",
       .outcome = Failed(Failure::kClient, make_error_code(boost::beast::http::error::body_limit)),
       .facts = kHereBodyUnread,
       .kind = AnswerKind::kRespond,
       .refusal = Refusal::kBodyTooLarge,
       .status = 413,
       .close = true},
      {.name = "client went away",
       .outcome = Failed(Failure::kClient, make_error_code(boost::asio::error::connection_reset)),
       .facts = kHereBodyUnread,
       .kind = AnswerKind::kFinish,
       .close = true},
      {.name = "backend timed out",
       .outcome = Failed(Failure::kUpstreamTimeout),
       .facts = kHere,
       .kind = AnswerKind::kRespond,
       .refusal = Refusal::kUpstreamTimeout,
       .status = 504,
       .outcome_name = "upstream_error",
       .upstream_error = UpstreamErrorKind::kTimeout,
       .peer_took_it = false},
      {.name = "backend I/O failed",
       .outcome = Failed(Failure::kBackendIO, kNoSpace),
       .facts = kHere,
       .kind = AnswerKind::kRespond,
       .refusal = Refusal::kBackendIoError,
       .status = 500,
       .detail = kNoSpaceMessage,
       .outcome_name = "upstream_error",
       .upstream_error = UpstreamErrorKind::kBackendIO,
       .peer_took_it = false},
      {.name = "backend unreachable",
       .outcome = Failed(Failure::kUpstreamConnect),
       .facts = kHere,
       .kind = AnswerKind::kRespond,
       .refusal = Refusal::kBadGateway,
       .status = 502,
       .detail = "could not connect to the backend",
       .outcome_name = "upstream_error",
       .upstream_error = UpstreamErrorKind::kConnect,
       .peer_took_it = false},
      {.name = "backend spoke no HTTP",
       .outcome = Failed(Failure::kUpstreamProtocol),
       .facts = kHere,
       .kind = AnswerKind::kRespond,
       .refusal = Refusal::kBadGateway,
       .status = 502,
       .detail = "the backend did not send a valid HTTP response",
       .outcome_name = "upstream_error",
       .upstream_error = UpstreamErrorKind::kProtocol,
       .peer_took_it = false},
      {.name = "no response and no failure",
       .outcome = Failed(Failure::kNone),
       .facts = kHere,
       .kind = AnswerKind::kRespond,
       .refusal = Refusal::kBadGateway,
       .status = 502,
       .detail = "the backend did not send a valid HTTP response"},
  };
}

TEST(FencedWriteAnswerTest, EachForwardOutcomeHasItsAnswer) {
  for (const ForwardCase& c : ForwardCases()) {
    SCOPED_TRACE(c.name);
    FencedWrite write(nullptr);
    if (c.write_cut) write.CutWrite();
    const ForwardAnswer answer = write.Answer(c.outcome, c.facts);
    EXPECT_EQ(answer.kind, c.kind);
    // A counted refusal carries its outcome as the admission refusals do.
    EXPECT_EQ(c.kind == AnswerKind::kRefuse ? answer.refusal.outcome : answer.outcome,
              c.outcome_name);
    EXPECT_EQ(answer.upstream_error, c.upstream_error);
    EXPECT_EQ(answer.peer_took_it, c.peer_took_it);
    EXPECT_FALSE(answer.backend_fence);
    if (c.refusal) {
      EXPECT_EQ(answer.refusal.refusal, *c.refusal);
      EXPECT_EQ(RefusalText(answer.refusal.refusal).status, c.status);
      EXPECT_EQ(answer.refusal.detail, c.detail);
      EXPECT_EQ(answer.refusal.close, c.close);
      EXPECT_FALSE(answer.close);
    } else {
      EXPECT_EQ(answer.close, c.close);
    }
  }
}

TEST(FencedWriteAnswerTest, ShardUnavailableIsAuditedAndAsksForARetry) {
  FencedWrite write(nullptr);
  const ForwardAnswer answer = write.Answer(Failed(Failure::kUpstreamConnect), kToPeer);
  ASSERT_EQ(answer.kind, AnswerKind::kRefuse);
  EXPECT_EQ(answer.refusal.outcome, "shard_unavailable");
  EXPECT_EQ(answer.refusal.audit_reason, "shard_unavailable");
  EXPECT_TRUE(answer.refusal.retry_after);
  EXPECT_FALSE(answer.refusal.rejection.has_value());
}

adapters::ForwardOutcome WithProblem(std::string_view type,
                                     std::optional<std::uint64_t> backend_token) {
  adapters::ForwardOutcome outcome;
  outcome.failure = Failure::kNone;
  outcome.problem.emplace();
  outcome.problem->status = 409;
  outcome.problem->type = type;
  outcome.backend_stale_token = backend_token;
  return outcome;
}

TEST(FencedWriteAnswerTest, AdaptersProblemIsRelayedAndAStaleBackendRaisesTheHighest) {
  FencedWrite write(nullptr);
  write.set_token(5);
  ForwardAnswer answer = write.Answer(WithProblem("path-escapes-root", std::nullopt), kHere);
  EXPECT_EQ(answer.kind, AnswerKind::kRelayProblem);
  EXPECT_FALSE(answer.backend_fence);
  EXPECT_TRUE(answer.outcome.empty());
  EXPECT_FALSE(write.highest().has_value());

  answer = write.Answer(WithProblem(adapters::kStaleAtBackendProblemType, 12), kHere);
  EXPECT_EQ(answer.kind, AnswerKind::kRelayProblem);
  EXPECT_TRUE(answer.backend_fence);
  EXPECT_EQ(answer.outcome, "backend_fence");
  EXPECT_EQ(write.highest(), Token{12});

  // The backend did not say which token it holds: the highest stays as it was.
  FencedWrite unsaid(nullptr);
  (void)unsaid.Decide(Decision(DecisionKind::kAdmitted, 5), false, false);
  answer = unsaid.Answer(WithProblem(adapters::kStaleAtBackendProblemType, std::nullopt), kHere);
  EXPECT_TRUE(answer.backend_fence);
  EXPECT_EQ(answer.outcome, "backend_fence");
  EXPECT_EQ(unsaid.highest(), Token{5});
}

}  // namespace
}  // namespace fencegate::gateway
