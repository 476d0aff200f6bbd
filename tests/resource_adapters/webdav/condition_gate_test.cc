#include "resource_adapters/webdav/condition_gate.h"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>

namespace fencegate::adapters::webdav {
namespace {

ConditionProbeResult GateProbe(std::string name, bool holds, bool required = true) {
  return ConditionProbeResult{std::move(name), holds, required, holds ? "" : "PUT answered 204"};
}

ConditionReport GateReport(ConditionVerdict verdict, std::vector<ConditionProbeResult> probes = {},
                           std::string error = {}) {
  ConditionReport report;
  report.verdict = verdict;
  report.probes = std::move(probes);
  report.error = std::move(error);
  return report;
}

// A prober that holds each probe's `done` until the test answers it.
struct ControlledProber {
  std::vector<std::function<void(ConditionReport)>> pending;
  ConditionGate::Prober AsProber() {
    return [this](boost::asio::io_context&, std::function<void(ConditionReport)> done) {
      pending.push_back(std::move(done));
    };
  }
  void Answer(ConditionReport report) {
    auto done = std::move(pending.front());
    pending.erase(pending.begin());
    done(std::move(report));
  }
};

// Runs what is ready; the io_context stops whenever it runs out of work, so it is restarted.
void RunReady(boost::asio::io_context& ioc) {
  ioc.restart();
  ioc.poll();
}

std::shared_ptr<ConditionBook> GateBook(ConditionProbeOptions::Policy policy) {
  ConditionProbeOptions options;
  options.policy = policy;
  return std::make_shared<ConditionBook>("dav", options);
}

// Under trust nothing is refused; the probe only tells which steps the server supports.
TEST(ConditionGateTest, TrustStaysTrustedAndLearnsWhetherTheServerKeepsTokens) {
  boost::asio::io_context ioc;
  ControlledProber prober;
  auto book = GateBook(ConditionProbeOptions::Policy::kTrust);
  auto gate = std::make_shared<ConditionGate>(book, prober.AsProber());
  ASSERT_TRUE(book->Find(""));
  EXPECT_EQ(book->Find("")->verdict, ConditionVerdict::kTrusted);
  EXPECT_TRUE(DecideFencedWrite(gate->Current(), "dav", false).wait);  // not probed yet
  EXPECT_TRUE(gate->StartOnce(ioc));
  RunReady(ioc);
  ASSERT_EQ(prober.pending.size(), 1u);
  ConditionReport ignored = GateReport(ConditionVerdict::kIgnored,
                                       {GateProbe("proppatch-dead-property-read-back", false)});
  ignored.checked_unix_ms = 1;
  prober.Answer(ignored);
  const ConditionReport report = gate->Current();
  EXPECT_EQ(report.verdict, ConditionVerdict::kTrusted);
  EXPECT_EQ(book->Find("")->verdict, ConditionVerdict::kTrusted);
  ASSERT_EQ(book->Find("")->probes.size(), 1u);
  const GateDecision decision = DecideFencedWrite(report, "dav", false);
  EXPECT_FALSE(decision.wait);
  EXPECT_FALSE(decision.refusal);
  EXPECT_FALSE(decision.store_tokens);
  gate->Stop();
}

TEST(ConditionGateTest, FirstCallerProbesAndWaitersShareTheProbe) {
  boost::asio::io_context ioc;
  ControlledProber prober;
  auto book = GateBook(ConditionProbeOptions::Policy::kVerify);
  auto gate = std::make_shared<ConditionGate>(book, prober.AsProber());
  EXPECT_EQ(book->Find("")->verdict, ConditionVerdict::kPending);
  EXPECT_TRUE(gate->StartOnce(ioc));
  EXPECT_FALSE(gate->StartOnce(ioc));
  std::vector<ConditionVerdict> seen;
  for (int i = 0; i < 3; ++i) {
    gate->WhenProbed(ioc.get_executor(),
                     [&seen](const ConditionReport& report) { seen.push_back(report.verdict); });
  }
  RunReady(ioc);
  ASSERT_EQ(prober.pending.size(), 1u);  // one probe for the start and all three writes
  EXPECT_TRUE(seen.empty());
  prober.Answer(GateReport(ConditionVerdict::kEnforced, {GateProbe("lock-exclusive", true)}));
  RunReady(ioc);
  EXPECT_EQ(seen, std::vector<ConditionVerdict>(3, ConditionVerdict::kEnforced));
  EXPECT_EQ(book->Find("")->verdict, ConditionVerdict::kEnforced);
  EXPECT_EQ(gate->Current().verdict, ConditionVerdict::kEnforced);
  gate->Stop();
}

TEST(ConditionGateTest, AWriteAfterAnUnreachableVerdictStartsANewProbe) {
  boost::asio::io_context ioc;
  ControlledProber prober;
  auto gate = std::make_shared<ConditionGate>(GateBook(ConditionProbeOptions::Policy::kVerify),
                                              prober.AsProber());
  gate->StartOnce(ioc);
  RunReady(ioc);
  const auto before = gate->generation();
  prober.Answer(GateReport(ConditionVerdict::kUnreachable, {}, "connection refused"));
  EXPECT_NE(gate->generation(), before);
  EXPECT_TRUE(prober.pending.empty());
  std::optional<ConditionVerdict> seen;
  gate->WhenProbed(ioc.get_executor(),
                   [&seen](const ConditionReport& report) { seen = report.verdict; });
  RunReady(ioc);
  ASSERT_EQ(prober.pending.size(), 1u);
  prober.Answer(
      GateReport(ConditionVerdict::kIgnored, {GateProbe("if-wrong-state-token-refused", false)}));
  RunReady(ioc);
  EXPECT_EQ(seen, ConditionVerdict::kIgnored);
  gate->Stop();
}

TEST(ConditionGateTest, ProbesAgainEveryInterval) {
  boost::asio::io_context ioc;
  ControlledProber prober;
  ConditionProbeOptions options;
  options.interval = std::chrono::milliseconds(1);
  auto book = std::make_shared<ConditionBook>("dav", options);
  auto gate = std::make_shared<ConditionGate>(book, prober.AsProber());
  gate->StartOnce(ioc);
  RunReady(ioc);
  prober.Answer(GateReport(ConditionVerdict::kEnforced));
  // The timer is the only work left: run until it fired and started the next probe.
  ioc.restart();
  while (prober.pending.empty() && ioc.run_one() > 0) {
  }
  ASSERT_EQ(prober.pending.size(), 1u);
  prober.Answer(GateReport(ConditionVerdict::kIgnored, {GateProbe("lock-exclusive", false)}));
  EXPECT_EQ(book->Find("")->verdict, ConditionVerdict::kIgnored);
  EXPECT_EQ(gate->Current().verdict, ConditionVerdict::kIgnored);
  gate->Stop();
  ioc.restart();
  ioc.run();  // the cancelled timer ends without a probe
  EXPECT_TRUE(prober.pending.empty());
}

// A reload that keeps the backend probes again at once; a second call while that probe runs
// does not start another.
TEST(ConditionGateTest, ProbeAgainStartsOneProbeNow) {
  boost::asio::io_context ioc;
  ControlledProber prober;
  auto book = GateBook(ConditionProbeOptions::Policy::kVerify);
  auto gate = std::make_shared<ConditionGate>(book, prober.AsProber());
  gate->ProbeAgain();  // not started: nothing to do yet
  gate->StartOnce(ioc);
  RunReady(ioc);
  prober.Answer(GateReport(ConditionVerdict::kEnforced));
  gate->ProbeAgain();
  gate->ProbeAgain();
  RunReady(ioc);
  ASSERT_EQ(prober.pending.size(), 1u);
  prober.Answer(GateReport(ConditionVerdict::kIgnored, {GateProbe("lock-exclusive", false)}));
  EXPECT_EQ(book->Find("")->verdict, ConditionVerdict::kIgnored);
  gate->Stop();
}

TEST(ConditionGateTest, StopAnswersWaitersAsUnreachable) {
  boost::asio::io_context ioc;
  ControlledProber prober;
  auto gate = std::make_shared<ConditionGate>(GateBook(ConditionProbeOptions::Policy::kVerify),
                                              prober.AsProber());
  gate->StartOnce(ioc);
  std::optional<ConditionReport> seen;
  gate->WhenProbed(ioc.get_executor(), [&seen](const ConditionReport& report) { seen = report; });
  gate->Stop();
  RunReady(ioc);
  ASSERT_TRUE(seen);
  EXPECT_EQ(seen->verdict, ConditionVerdict::kUnreachable);
  EXPECT_EQ(seen->error, "the gateway is stopping");
}

TEST(DecideFencedWriteTest, GoesOnWhenEnforcedPartialOrTrusted) {
  for (auto verdict :
       {ConditionVerdict::kEnforced, ConditionVerdict::kPartial, ConditionVerdict::kTrusted}) {
    ConditionReport report =
        GateReport(verdict, {GateProbe("proppatch-dead-property-read-back", true)});
    report.checked_unix_ms = 1;
    const GateDecision decision = DecideFencedWrite(report, "dav", false);
    EXPECT_FALSE(decision.wait);
    EXPECT_FALSE(decision.refusal);
    EXPECT_TRUE(decision.store_tokens);
  }
}

TEST(DecideFencedWriteTest, RefusesIgnoredNamingTheFailedProbe) {
  const GateDecision decision =
      DecideFencedWrite(GateReport(ConditionVerdict::kIgnored,
                                   {GateProbe("lock-exclusive", true),
                                    GateProbe("proppatch-dead-property-read-back", false)}),
                        "dav", false);
  ASSERT_TRUE(decision.refusal);
  EXPECT_EQ(decision.refusal->status, 503u);
  EXPECT_EQ(decision.refusal->type, "backend-conditions-not-enforced");
  EXPECT_NE(decision.refusal->detail.find("proppatch-dead-property-read-back: PUT answered 204"),
            std::string::npos);
  EXPECT_EQ(decision.refusal->detail.find("lock-exclusive"), std::string::npos);
  EXPECT_FALSE(decision.refusal->retry_after);
}

TEST(DecideFencedWriteTest, WaitsOnceThenRefusesUnverifiedWithRetryAfter) {
  const ConditionReport unreachable =
      GateReport(ConditionVerdict::kUnreachable, {}, "MKCOL /.fencegate-probe/: refused");
  EXPECT_TRUE(DecideFencedWrite(unreachable, "dav", false).wait);
  EXPECT_TRUE(DecideFencedWrite(GateReport(ConditionVerdict::kPending), "dav", false).wait);
  const GateDecision decision = DecideFencedWrite(unreachable, "dav", true);
  EXPECT_FALSE(decision.wait);
  ASSERT_TRUE(decision.refusal);
  EXPECT_EQ(decision.refusal->status, 503u);
  EXPECT_EQ(decision.refusal->type, "backend-conditions-unverified");
  EXPECT_TRUE(decision.refusal->retry_after);
  EXPECT_NE(decision.refusal->detail.find("MKCOL /.fencegate-probe/: refused"), std::string::npos);
}

}  // namespace
}  // namespace fencegate::adapters::webdav
