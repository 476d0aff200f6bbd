// The s3 adapter's condition probes (docs/BACKEND_TRUST.md "S3") against an in-memory S3 server
// that enforces, ignores or partly enforces conditional headers: verdicts in the factory's
// ConditionBook, fenced writes held until their bucket's verdict and refused where the backend
// ignores conditions, reads always served.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "resource_adapters/s3/bucket_conditions.h"
#include "resource_adapters/s3/s3_adapter.h"
#include "resource_adapters/transport/condition_book.h"
#include "tests/resource_adapters/fake_downstream.h"
#include "tests/resource_adapters/s3/fake_s3_server.h"

namespace fencegate::adapters {
namespace {

using testing::FakeDownstream;
using testing::FakeS3Server;
using Policy = ConditionProbeOptions::Policy;

// Runs `ioc` until `state` holds (a state the adapter reports, not a time), at most 30 s.
bool RunUntilState(boost::asio::io_context& ioc, const std::function<bool()>& state) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!state()) {
    if (std::chrono::steady_clock::now() > limit) return false;
    ioc.restart();
    ioc.run_one_for(std::chrono::milliseconds(50));
  }
  return true;
}

class S3ConditionsTest : public ::testing::Test {
 protected:
  void Start(FakeS3Server::Behaviour behaviour, ConditionProbeOptions conditions = {},
             EtagQuoting quoting = EtagQuoting::kAuto) {
    server_ = std::make_unique<FakeS3Server>(behaviour);
    server_->CreateBucket("bucket");
    server_->CreateBucket("other");
    S3AdapterOptions options;
    options.host = "127.0.0.1";
    options.port = server_->port();
    options.access_key = "key";
    options.secret_key = "secret";
    options.etag_quoting = quoting;
    options.conditions = std::move(conditions);
    std::string error;
    factory_ = MakeS3AdapterFactory(options, &error);
    ASSERT_NE(factory_, nullptr) << error;
    adapter_ = factory_->CreateForThread(ioc_);
  }

  void TearDown() override {
    if (adapter_) adapter_->Shutdown();
  }

  static RequestHeader Header(http::verb method, const std::string& target) {
    RequestHeader header;
    header.method(method);
    header.target(target);
    header.version(11);
    return header;
  }

  ForwardOutcome Forward(http::verb method, const std::string& target,
                         std::optional<std::uint64_t> token, std::string body = {}) {
    RequestHeader header = Header(method, target);
    if (!body.empty()) header.set(http::field::content_length, std::to_string(body.size()));
    FakeDownstream downstream(ioc_, std::move(body));
    ForwardRequest request;
    request.header = &header;
    request.fencing_token = token;
    request.fence_key = target;
    return testing::ForwardAndWait(ioc_, *adapter_, request, downstream);
  }

  std::optional<ConditionReport> Report(const std::string& scope) const {
    return factory_->condition_book()->Find(scope);
  }

  boost::asio::io_context ioc_;
  std::unique_ptr<FakeS3Server> server_;
  std::unique_ptr<AdapterFactory> factory_;
  std::unique_ptr<ResourceAdapter> adapter_;
};

std::vector<std::string> ProbeNames(const ConditionReport& report, bool holding) {
  std::vector<std::string> names;
  for (const ConditionProbeResult& probe : report.probes) {
    if (probe.holds == holding) names.push_back(probe.name);
  }
  return names;
}

TEST_F(S3ConditionsTest, EnforcingBackendIsEnforcedAndTheFirstWriteWaitsForIt) {
  Start({});
  const ForwardOutcome written = Forward(http::verb::put, "/bucket/a", 7, "seven");
  EXPECT_FALSE(written.problem.has_value()) << written.problem->detail;
  EXPECT_EQ(written.status, 200u);
  const std::optional<ConditionReport> report = Report("bucket");
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->verdict, ConditionVerdict::kEnforced) << report->error;
  EXPECT_EQ(ProbeNames(*report, true),
            (std::vector<std::string>{"put-if-none-match-existing", "put-if-match-wrong-etag",
                                      "delete-if-match-wrong-etag",
                                      "copy-destination-if-match-wrong-etag"}));
  EXPECT_GT(report->checked_unix_ms, 0);
  EXPECT_EQ(server_->probe_runs(), 1);
  // The scratch objects are gone; the write landed with its token.
  const auto objects = server_->Objects();
  ASSERT_EQ(objects.size(), 1u);
  EXPECT_EQ(objects.begin()->first, "bucket/a");
  EXPECT_EQ(objects.begin()->second.token, "7");

  // Later writes use the thread's copy of the verdict: no second probe.
  EXPECT_EQ(Forward(http::verb::put, "/bucket/a", 8, "eight").status, 200u);
  EXPECT_EQ(server_->probe_runs(), 1);
}

TEST_F(S3ConditionsTest, IgnoringBackendRefusesFencedWritesAndServesReads) {
  Start(
      {.put_conditions = false, .delete_conditions = false, .copy_destination_conditions = false});
  const ForwardOutcome refused = Forward(http::verb::put, "/bucket/a", 7, "seven");
  ASSERT_TRUE(refused.problem.has_value());
  EXPECT_EQ(refused.problem->status, 503u);
  EXPECT_EQ(refused.problem->type, "backend-conditions-not-enforced");
  EXPECT_NE(refused.problem->detail.find("put-if-match-wrong-etag"), std::string::npos)
      << refused.problem->detail;
  EXPECT_NE(refused.problem->detail.find("put-if-none-match-existing"), std::string::npos);
  EXPECT_TRUE(server_->Objects().empty()) << "nothing lands";
  const std::optional<ConditionReport> report = Report("bucket");
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->verdict, ConditionVerdict::kIgnored);

  // Fenced DELETE and multipart creation are refused too; unfenced requests are served.
  EXPECT_EQ(Forward(http::verb::delete_, "/bucket/a", 9).problem->type,
            "backend-conditions-not-enforced");
  EXPECT_EQ(Forward(http::verb::post, "/bucket/a?uploads", 9).problem->type,
            "backend-conditions-not-enforced");
  EXPECT_EQ(Forward(http::verb::put, "/bucket/b", std::nullopt, "plain").status, 200u);
  const ForwardOutcome read = Forward(http::verb::get, "/bucket/b", std::nullopt);
  EXPECT_EQ(read.status, 200u);
  EXPECT_EQ(server_->probe_runs(), 1);
}

TEST_F(S3ConditionsTest, PutOnlyBackendIsPartialAndFencedWritesGoOn) {
  // radosgw 16.2: conditions hold on PUT, and only with a bare ETag; DELETE and the copy
  // destination ignore them.
  Start({.put_conditions = true,
         .delete_conditions = false,
         .copy_destination_conditions = false,
         .bare_etags_only = true});
  const ForwardOutcome written = Forward(http::verb::put, "/bucket/a", 7, "seven");
  EXPECT_EQ(written.status, 200u) << (written.problem ? written.problem->detail : "");
  const std::optional<ConditionReport> report = Report("bucket");
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->verdict, ConditionVerdict::kPartial);
  EXPECT_EQ(ProbeNames(*report, false),
            (std::vector<std::string>{"delete-if-match-wrong-etag",
                                      "copy-destination-if-match-wrong-etag"}));
  // The probe taught "auto" quoting the bare form: the write over the object sends it bare and
  // lands at the first attempt.
  EXPECT_EQ(Forward(http::verb::put, "/bucket/a", 8, "eight").status, 200u);
  const auto received = server_->received();
  const auto& last = received.back().request;
  ASSERT_EQ(last.method(), http::verb::put);
  const std::string if_match(last[http::field::if_match]);
  ASSERT_FALSE(if_match.empty());
  EXPECT_NE(if_match.front(), '"') << "a bare ETag, not a quoted one";
  EXPECT_EQ(server_->Objects().at("bucket/a").token, "8");
  // A fenced delete goes through (as a tombstone write).
  EXPECT_EQ(Forward(http::verb::delete_, "/bucket/a", 9).status, 204u);
}

TEST_F(S3ConditionsTest, ConcurrentFirstWritesShareOneProbe) {
  Start({});
  constexpr int kWrites = 4;
  std::vector<std::unique_ptr<FakeDownstream>> downstreams;
  std::vector<RequestHeader> headers(kWrites);
  std::vector<std::string> targets;
  std::vector<ForwardOutcome> outcomes(kWrites);
  int done = 0;
  for (int i = 0; i < kWrites; ++i) targets.push_back("/bucket/k" + std::to_string(i));
  for (int i = 0; i < kWrites; ++i) {
    headers[i] = Header(http::verb::put, targets[i]);
    headers[i].set(http::field::content_length, "1");
    downstreams.push_back(std::make_unique<FakeDownstream>(ioc_, "x"));
    ForwardRequest request;
    request.header = &headers[i];
    request.fencing_token = 3;
    request.fence_key = targets[i];
    adapter_->Forward(request, *downstreams[i], [&, i](ForwardOutcome outcome) {
      outcomes[i] = std::move(outcome);
      ++done;
    });
  }
  ASSERT_TRUE(RunUntilState(ioc_, [&] { return done == kWrites; }));
  for (const ForwardOutcome& outcome : outcomes) EXPECT_EQ(outcome.status, 200u);
  EXPECT_EQ(server_->probe_runs(), 1);
  EXPECT_EQ(server_->Objects().size(), static_cast<std::size_t>(kWrites));
}

TEST_F(S3ConditionsTest, UnreachableBackendIsProbedAgainByTheNextWrite) {
  Start({});
  server_->SetDown(true);
  const ForwardOutcome refused = Forward(http::verb::put, "/bucket/a", 7, "seven");
  ASSERT_TRUE(refused.problem.has_value());
  EXPECT_EQ(refused.problem->status, 503u);
  EXPECT_EQ(refused.problem->type, "backend-conditions-unverified");
  EXPECT_TRUE(refused.problem->retry_after);
  ASSERT_TRUE(Report("bucket").has_value());
  EXPECT_EQ(Report("bucket")->verdict, ConditionVerdict::kUnreachable);
  EXPECT_FALSE(Report("bucket")->error.empty());

  server_->SetDown(false);
  EXPECT_EQ(Forward(http::verb::put, "/bucket/a", 7, "seven").status, 200u);
  EXPECT_EQ(Report("bucket")->verdict, ConditionVerdict::kEnforced);
}

// No connection at all: the write is answered as one that met the failure itself (the gateway's
// 502, counted as a connect error), and the bucket is unreachable.
TEST_F(S3ConditionsTest, RefusedConnectionIsAConnectFailure) {
  Start({});
  server_.reset();  // nothing listens on the port any more
  const ForwardOutcome failed = Forward(http::verb::put, "/bucket/a", 7, "seven");
  EXPECT_EQ(failed.failure, ForwardOutcome::Failure::kUpstreamConnect);
  EXPECT_FALSE(failed.response_started);
  ASSERT_TRUE(Report("bucket").has_value());
  EXPECT_EQ(Report("bucket")->verdict, ConditionVerdict::kUnreachable);
}

TEST_F(S3ConditionsTest, MissingBucketGetsNoVerdict) {
  Start({});
  const ForwardOutcome refused = Forward(http::verb::put, "/nosuchbucket/a", 7, "seven");
  ASSERT_TRUE(refused.problem.has_value());
  EXPECT_EQ(refused.problem->type, "backend-conditions-unverified");
  EXPECT_NE(refused.problem->detail.find("404 NoSuchBucket"), std::string::npos)
      << refused.problem->detail;
  EXPECT_FALSE(Report("nosuchbucket").has_value());
}

TEST_F(S3ConditionsTest, VerdictsAreKeptPerBucket) {
  Start({});
  EXPECT_EQ(Forward(http::verb::put, "/bucket/a", 7, "seven").status, 200u);
  EXPECT_EQ(Forward(http::verb::put, "/other/a", 7, "seven").status, 200u);
  EXPECT_EQ(server_->probe_runs(), 2);
  EXPECT_EQ(factory_->condition_book()->Reports().size(), 2u);
}

TEST_F(S3ConditionsTest, ConfiguredBucketsAreProbedAtStartAndAgainEveryInterval) {
  ConditionProbeOptions conditions;
  conditions.buckets = {"bucket"};
  conditions.interval = std::chrono::milliseconds(20);
  conditions.prefix = "scratch/";
  Start({}, conditions);
  EXPECT_EQ(Report("bucket")->verdict, ConditionVerdict::kPending);
  ASSERT_TRUE(RunUntilState(ioc_, [&] { return server_->probe_runs() >= 1; }));
  ASSERT_TRUE(RunUntilState(
      ioc_, [&] { return Report("bucket")->verdict == ConditionVerdict::kEnforced; }));
  // Re-probed on the interval, under the configured prefix.
  ASSERT_TRUE(RunUntilState(ioc_, [&] { return server_->probe_runs() >= 3; }));
  bool under_prefix = false;
  for (const auto& received : server_->received()) {
    if (received.request.target().starts_with("/bucket/scratch/s3-")) under_prefix = true;
  }
  EXPECT_TRUE(under_prefix);
  // A write finds the verdict there.
  EXPECT_EQ(Forward(http::verb::put, "/bucket/a", 7, "seven").status, 200u);
}

// A reload that keeps the backend probes its buckets again, even without an interval.
TEST_F(S3ConditionsTest, ProbeConditionsAgainProbesEveryBucketNow) {
  ConditionProbeOptions conditions;
  conditions.buckets = {"bucket"};
  conditions.interval = std::chrono::milliseconds(0);
  Start({}, conditions);
  ASSERT_TRUE(RunUntilState(
      ioc_, [&] { return Report("bucket")->verdict == ConditionVerdict::kEnforced; }));
  EXPECT_EQ(server_->probe_runs(), 1);
  factory_->ProbeConditionsAgain();
  ASSERT_TRUE(RunUntilState(ioc_, [&] { return server_->probe_runs() == 2; }));
}

TEST_F(S3ConditionsTest, TrustPolicyNeverProbes) {
  ConditionProbeOptions conditions;
  conditions.policy = Policy::kTrust;
  conditions.buckets = {"bucket"};
  Start({.put_conditions = false, .delete_conditions = false, .copy_destination_conditions = false},
        conditions);
  EXPECT_EQ(Forward(http::verb::put, "/bucket/a", 7, "seven").status, 200u);
  EXPECT_EQ(server_->probe_runs(), 0);
  const auto reports = factory_->condition_book()->Reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].scope, "");
  EXPECT_EQ(reports[0].verdict, ConditionVerdict::kTrusted);
}

TEST_F(S3ConditionsTest, BucketLevelRequestsAndReadsAreNotHeld) {
  Start(
      {.put_conditions = false, .delete_conditions = false, .copy_destination_conditions = false});
  EXPECT_EQ(Forward(http::verb::get, "/bucket?list-type=2", 5).problem, std::nullopt);
  EXPECT_EQ(Forward(http::verb::get, "/bucket/a", 5).status, 404u);
  EXPECT_EQ(server_->probe_runs(), 0);
}

// BucketConditions and BucketGates without a backend.
s3::BucketProbe Probed(ConditionReport report) {
  s3::BucketProbe probe;
  probe.report = std::move(report);
  return probe;
}

TEST(BucketConditionsTest, JoinStartsOneProbeAndFinishWakesEveryWaiter) {
  boost::asio::io_context ioc;
  s3::BucketConditions conditions("b", {});
  auto first = std::make_shared<s3::ProbeWait>(ioc);
  auto second = std::make_shared<s3::ProbeWait>(ioc);
  EXPECT_TRUE(conditions.Join("x", ioc.get_executor(), first));
  EXPECT_FALSE(conditions.Join("x", ioc.get_executor(), second));
  const std::uint64_t generation = conditions.generation();
  conditions.Finish("x", Probed(s3::ScopeReport("x", ConditionVerdict::kEnforced)));
  EXPECT_NE(conditions.generation(), generation);
  ioc.run();
  ASSERT_TRUE(first->probe.has_value());
  ASSERT_TRUE(second->probe.has_value());
  EXPECT_EQ(second->probe->report.verdict, ConditionVerdict::kEnforced);
  // The next Join starts a new probe; a result that is not recorded leaves the book alone.
  EXPECT_TRUE(conditions.Join("x", {}, {}));
  s3::BucketProbe missing = Probed(s3::ScopeReport("x", ConditionVerdict::kUnreachable));
  missing.bucket_missing = true;
  conditions.Finish("x", missing);
  EXPECT_EQ(conditions.book()->Find("x")->verdict, ConditionVerdict::kEnforced);
}

TEST(BucketConditionsTest, GatesKeepFinalVerdictsUntilANewOneIsRecorded) {
  ConditionProbeOptions options;
  options.buckets = {"x"};
  auto conditions = std::make_shared<s3::BucketConditions>("b", options);
  s3::BucketGates gates(conditions);
  EXPECT_EQ(gates.Find("x"), nullptr) << "pending is not final";
  ConditionReport partial = s3::ScopeReport("x", ConditionVerdict::kPartial);
  partial.probes = {{"copy-destination-if-match-wrong-etag", false, false, ""},
                    {"delete-if-match-wrong-etag", true, false, ""}};
  conditions->Finish("x", Probed(partial));
  const s3::BucketGate* gate = gates.Find("x");
  ASSERT_NE(gate, nullptr);
  EXPECT_EQ(gate->verdict, ConditionVerdict::kPartial);
  EXPECT_FALSE(gate->copy_destination_conditions);
  conditions->Finish("x", Probed(s3::ScopeReport("x", ConditionVerdict::kUnreachable)));
  EXPECT_EQ(gates.Find("x"), nullptr) << "unreachable: the write probes again";
  ConditionReport ignored = s3::ScopeReport("x", ConditionVerdict::kIgnored);
  ignored.probes = {{"put-if-match-wrong-etag", false, true, "answered 200"}};
  conditions->Finish("x", Probed(ignored));
  ASSERT_NE(gates.Find("x"), nullptr);
  EXPECT_EQ(gates.Find("x")->failed_probes, "put-if-match-wrong-etag: answered 200");
}

TEST(BucketConditionsTest, TrustRecordsOneTrustedReportAndGatesEverything) {
  ConditionProbeOptions options;
  options.policy = Policy::kTrust;
  options.buckets = {"x"};
  auto conditions = std::make_shared<s3::BucketConditions>("b", options);
  const auto reports = conditions->book()->Reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].verdict, ConditionVerdict::kTrusted);
  s3::BucketGates gates(conditions);
  ASSERT_NE(gates.Find("anything"), nullptr);
  EXPECT_EQ(gates.Find("anything")->verdict, ConditionVerdict::kTrusted);
  EXPECT_FALSE(gates.Find("anything")->copy_destination_conditions);
}

}  // namespace
}  // namespace fencegate::adapters
