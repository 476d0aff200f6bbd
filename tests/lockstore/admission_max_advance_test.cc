// AdmissionController::Admit with max_advance 0: the bound authorization uses for principals
// without an advance grant (only writes at the current highest pass). Larger bounds:
// max_advance_test.cc.
#include <gtest/gtest.h>

#include "lockstore/fence/admission.h"
#include "lockstore/fence/memory_fence_store.h"
#include "tests/lockstore/admission_test_support.h"

namespace fencegate::lockstore {
namespace {

using Kind = AdmissionDecision::Kind;
using testing::Decisions;
using testing::Unexpected;

class NoAdvanceTest : public ::testing::Test {
 protected:
  NoAdvanceTest() : controller_(store_, AdmissionOptions{}) {}

  // Raises `key` to `token` without a bound and completes that write.
  void Establish(Token token) {
    auto decision = controller_.Admit("k", token, "setup", Unexpected());
    ASSERT_TRUE(decision.has_value());
    ASSERT_EQ(decision->kind, Kind::kAdmitted);
    controller_.Complete("k", token);
  }

  MemoryFenceStore store_;
  AdmissionController controller_;
};

TEST_F(NoAdvanceTest, ZeroAdmitsTheCurrentHighestAndRefusesAnyAdvance) {
  Establish(5);
  const std::size_t advances_before = store_.advance_calls();

  auto equal = controller_.Admit("k", 5, "eq", Unexpected(), Token{0});
  ASSERT_TRUE(equal.has_value());
  EXPECT_EQ(equal->kind, Kind::kAdmitted);
  controller_.Complete("k", 5);

  auto higher = controller_.Admit("k", 6, "up", Unexpected(), Token{0});
  ASSERT_TRUE(higher.has_value());
  EXPECT_EQ(higher->kind, Kind::kTooFarAhead);
  EXPECT_EQ(higher->highest, 5u);

  // A stale token is still stale, not an advance.
  auto lower = controller_.Admit("k", 4, "low", Unexpected(), Token{0});
  ASSERT_TRUE(lower.has_value());
  EXPECT_EQ(lower->kind, Kind::kStale);

  // Nothing was written and the fence did not move: 6 is still an advance for an unbounded
  // caller, and 5 is still admitted.
  EXPECT_EQ(store_.advance_calls(), advances_before);
  auto view = controller_.Inspect("k");
  ASSERT_TRUE(view.has_value());
  EXPECT_EQ(view->durable.highest, 5u);
  EXPECT_EQ(view->pending_advance, 0u);
}

TEST_F(NoAdvanceTest, PendingAdvanceCountsAsHighest) {
  Establish(1);
  store_.SetDeferred(true);
  Decisions first;
  // An unbounded advance to 8 is being made durable ...
  ASSERT_FALSE(controller_.Admit("k", 8, "a", first.Callback()).has_value());
  // ... so 8 is the highest for a caller without an advance grant: joining it is no advance.
  Decisions joined;
  ASSERT_FALSE(controller_.Admit("k", 8, "b", joined.Callback(), Token{0}).has_value());
  auto beyond = controller_.Admit("k", 9, "c", Unexpected(), Token{0});
  ASSERT_TRUE(beyond.has_value());
  EXPECT_EQ(beyond->kind, Kind::kTooFarAhead);
  EXPECT_EQ(beyond->highest, 8u);
  store_.RunPending();
  ASSERT_EQ(first.received().size(), 1u);
  ASSERT_EQ(joined.received().size(), 1u);
  EXPECT_EQ(joined.received()[0].kind, Kind::kAdmitted);
  controller_.Complete("k", 8);
  controller_.Complete("k", 8);
}

TEST_F(NoAdvanceTest, KeyNotYetLoadedIsDecidedWithTheBound) {
  // A fresh controller over a store that already holds 3 for "k": the key is read first.
  Establish(3);
  AdmissionController fresh(store_, AdmissionOptions{});
  store_.SetDeferred(true);
  Decisions refused;
  auto decision = fresh.Admit("k", 4, "r", refused.Callback(), Token{0});
  if (!decision) {
    store_.RunPending();
    ASSERT_EQ(refused.received().size(), 1u);
    decision = refused.received()[0];
  }
  EXPECT_EQ(decision->kind, Kind::kTooFarAhead);
  EXPECT_EQ(decision->highest, 3u);
}

}  // namespace
}  // namespace fencegate::lockstore
