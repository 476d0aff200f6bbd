// ResourceFenceAdmission (gateway/session/resource_fence_admission.h) against a real
// AdmissionController over a memory fence store: every resource a request's body names is
// admitted under its own fence key, in sorted order, all or none.
#include "gateway/session/resource_fence_admission.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lockstore/fence/memory_fence_store.h"
#include "tests/lockstore/admission_test_support.h"

namespace fencegate::gateway {
namespace {

using lockstore::Token;
using Verdict = adapters::ResourceFence::Verdict;

class ResourceFenceAdmissionTest : public ::testing::Test {
 protected:
  ResourceFenceAdmissionTest() : controller_(store_, lockstore::AdmissionOptions{}) {
    EXPECT_TRUE(lockstore::FenceKeyTemplate::Parse("s3:{path}", &template_).ok());
  }

  // The fence of `key` raised to `token` by a write that has finished.
  void Raise(const std::string& key, Token token) {
    const auto decision = controller_.Admit(key, token, "setup", lockstore::testing::Unexpected());
    ASSERT_TRUE(decision.has_value());
    ASSERT_EQ(decision->kind, lockstore::AdmissionDecision::Kind::kAdmitted);
    controller_.Complete(key, token);
  }

  ResourceFenceAdmission::Context MakeContext(Token token) {
    return {.admission = &controller_,
            .fence_key = &template_,
            .host = "gateway",
            .route = "s3",
            .token = token,
            .request_id = "multi",
            .disclose_highest_token = true,
            .policy =
                [this](std::string_view key) {
                  policy_asked_.emplace_back(key);
                  return policy_;
                },
            .post = [this](std::function<void()> run) { posted_.push_back(std::move(run)); }};
  }

  // Runs what the fence posted to "the network thread" until nothing is left.
  void RunPosted() {
    while (!posted_.empty()) {
      auto run = std::move(posted_.front());
      posted_.erase(posted_.begin());
      run();
    }
  }

  std::optional<Verdict> AdmitAll(ResourceFenceAdmission& fence, std::vector<std::string> paths) {
    std::optional<Verdict> verdict;
    fence.AdmitAll(std::move(paths), [&verdict](Verdict v) { verdict = std::move(v); });
    EXPECT_FALSE(verdict.has_value()) << "the verdict came inside AdmitAll";
    RunPosted();
    return verdict;
  }

  std::uint64_t InFlight(const std::string& key) {
    const auto view = controller_.Inspect(key);
    return view ? view->writes_in_flight : 0;
  }

  lockstore::MemoryFenceStore store_;
  lockstore::AdmissionController controller_;
  lockstore::FenceKeyTemplate template_;
  ResourceFenceAdmission::KeyPolicy policy_;
  std::vector<std::string> policy_asked_;
  std::vector<std::function<void()>> posted_;
};

TEST_F(ResourceFenceAdmissionTest, EveryKeyIsAdmittedInSortedOrderAndReleasedOnce) {
  ResourceFenceAdmission fence;
  fence.Begin(MakeContext(7));
  const auto verdict = AdmitAll(fence, {"/b/z", "/b/a key", "/b/z", "/b/caf\xC3\xA9"});
  ASSERT_TRUE(verdict.has_value());
  EXPECT_TRUE(verdict->admitted);
  // Canonical spellings, each once, sorted.
  EXPECT_EQ(policy_asked_,
            (std::vector<std::string>{"s3:/b/a%20key", "s3:/b/caf%C3%A9", "s3:/b/z"}));
  EXPECT_EQ(InFlight("s3:/b/a%20key"), 1u);
  EXPECT_EQ(InFlight("s3:/b/z"), 1u);

  fence.CompleteAll();
  EXPECT_EQ(InFlight("s3:/b/a%20key"), 0u);
  EXPECT_EQ(InFlight("s3:/b/z"), 0u);
  fence.CompleteAll();  // nothing is owed twice
  EXPECT_EQ(controller_.Inspect("s3:/b/z")->durable.highest, Token{7});
}

TEST_F(ResourceFenceAdmissionTest, AStaleKeyRefusesAllAndReleasesWhatWasAdmitted) {
  Raise("s3:/b/m", 9);
  ResourceFenceAdmission fence;
  fence.Begin(MakeContext(8));
  const auto verdict = AdmitAll(fence, {"/b/z", "/b/a", "/b/m"});
  ASSERT_TRUE(verdict.has_value());
  EXPECT_FALSE(verdict->admitted);
  ASSERT_TRUE(verdict->problem.has_value());
  EXPECT_EQ(verdict->problem->status, 409u);
  EXPECT_EQ(verdict->problem->type, adapters::kStaleAtGatewayProblemType);
  EXPECT_NE(verdict->problem->detail.find("'/b/m'"), std::string::npos) << verdict->problem->detail;
  EXPECT_NE(verdict->problem->detail.find("highest 9"), std::string::npos);
  EXPECT_EQ(fence.stale_key(), "s3:/b/m");
  EXPECT_EQ(fence.stale_highest(), Token{9});
  // "/b/a" was admitted before "/b/m" was found stale, and released with the refusal; "/b/z"
  // comes after it and was never asked for.
  EXPECT_EQ(InFlight("s3:/b/a"), 0u);
  EXPECT_EQ(policy_asked_, (std::vector<std::string>{"s3:/b/a", "s3:/b/m"}));
}

TEST_F(ResourceFenceAdmissionTest, WithoutDisclosureTheHighestTokenIsNotNamed) {
  Raise("s3:/b/m", 9);
  ResourceFenceAdmission fence;
  auto context = MakeContext(8);
  context.disclose_highest_token = false;
  fence.Begin(std::move(context));
  const auto verdict = AdmitAll(fence, {"/b/m"});
  ASSERT_TRUE(verdict.has_value() && verdict->problem.has_value());
  EXPECT_EQ(verdict->problem->detail.find('9'), std::string::npos) << verdict->problem->detail;
  EXPECT_FALSE(verdict->disclose_highest_token);
}

TEST_F(ResourceFenceAdmissionTest, UnusablePathsAndPolicyRefusalsAdmitNothing) {
  ResourceFenceAdmission fence;
  fence.Begin(MakeContext(3));
  auto verdict = AdmitAll(fence, {"/b/ok", "/b/../escape"});
  ASSERT_TRUE(verdict.has_value() && verdict->problem.has_value());
  EXPECT_EQ(verdict->problem->status, 400u);
  EXPECT_EQ(verdict->problem->type, "bad-path");
  EXPECT_EQ(InFlight("s3:/b/ok"), 0u);

  fence.Reset();
  fence.Begin(MakeContext(3));
  policy_ = {.refused = adapters::Problem{403, "forged-token", "Forged", "no"}};
  verdict = AdmitAll(fence, {"/b/ok"});
  ASSERT_TRUE(verdict.has_value() && verdict->problem.has_value());
  EXPECT_EQ(verdict->problem->type, "forged-token");
  EXPECT_EQ(InFlight("s3:/b/ok"), 0u);

  // A bound of 0 (the policy grants no advance) refuses a token that would raise a fence.
  fence.Reset();
  fence.Begin(MakeContext(3));
  policy_ = {.max_advance = Token{0}, .advance_forbidden = true};
  verdict = AdmitAll(fence, {"/b/new"});
  ASSERT_TRUE(verdict.has_value() && verdict->problem.has_value());
  EXPECT_EQ(verdict->problem->status, 403u);
  EXPECT_NE(verdict->problem->detail.find("grants this principal no advance"), std::string::npos);
}

TEST_F(ResourceFenceAdmissionTest, AKeyBehindTheBarrierIsDecidedLaterOnTheSessionsThread) {
  // A write of 4 on "/b/k" is in flight: 6 waits at the barrier until it completes.
  const auto in_flight = controller_.Admit("s3:/b/k", 4, "older", lockstore::testing::Unexpected());
  ASSERT_TRUE(in_flight.has_value());
  ResourceFenceAdmission fence;
  fence.Begin(MakeContext(6));
  std::optional<Verdict> verdict;
  fence.AdmitAll({"/b/a", "/b/k"}, [&verdict](Verdict v) { verdict = std::move(v); });
  RunPosted();
  EXPECT_FALSE(verdict.has_value());
  EXPECT_EQ(InFlight("s3:/b/a"), 1u) << "keys before the waiting one stay admitted";

  controller_.Complete("s3:/b/k", 4);  // the decision is posted, not run here
  EXPECT_FALSE(verdict.has_value());
  RunPosted();
  ASSERT_TRUE(verdict.has_value());
  EXPECT_TRUE(verdict->admitted);
  fence.Reset();
  EXPECT_EQ(InFlight("s3:/b/a"), 0u);
  EXPECT_EQ(InFlight("s3:/b/k"), 0u);
}

}  // namespace
}  // namespace fencegate::gateway
