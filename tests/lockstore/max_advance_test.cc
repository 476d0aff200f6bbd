// AdmissionController's max_advance bound (README "Tokens"): a token-inflation guard decided
// under the same lock as the admission, so the fence is never touched by a refused token.
#include <gtest/gtest.h>

#include "lockstore/fence/admission.h"
#include "lockstore/fence/memory_fence_store.h"

namespace fencegate::lockstore {
namespace {

using Kind = AdmissionDecision::Kind;

AdmissionController::Callback Ignore() {
  return [](const AdmissionDecision&) {};
}

AdmissionOptions Options() {
  AdmissionOptions options;
  options.now_ms = [] { return std::int64_t{1000}; };
  return options;
}

// Admits `token` on `key` (an advance, run to durability) and completes it.
void Raise(AdmissionController& controller, MemoryFenceStore& store, Token token) {
  AdmissionDecision got;
  auto now = controller.Admit("k", token, "setup", [&](const AdmissionDecision& d) { got = d; });
  store.RunPending();
  if (now) got = *now;
  ASSERT_EQ(got.kind, Kind::kAdmitted);
  controller.Complete("k", token);
}

TEST(MaxAdvanceTest, RefusesTooFarAndLeavesTheFence) {
  MemoryFenceStore store;
  store.SetDeferred(true);
  AdmissionController controller(store, Options());
  Raise(controller, store, 100);
  const std::size_t advances = store.advance_calls();

  auto refused = controller.Admit("k", 111, "r", Ignore(), 10);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->kind, Kind::kTooFarAhead);
  EXPECT_EQ(refused->highest, 100u);
  auto inflated = controller.Admit("k", kMaxToken, "r", Ignore(), 10);
  ASSERT_TRUE(inflated.has_value());
  EXPECT_EQ(inflated->kind, Kind::kTooFarAhead);
  EXPECT_EQ(store.advance_calls(), advances);
  EXPECT_EQ(controller.Inspect("k")->durable.highest, 100u);
  EXPECT_EQ(controller.Inspect("k")->pending_advance, 0u);

  // Exactly N above is allowed; an unbounded admission (a signed token) may jump further.
  Raise(controller, store, 110);
  EXPECT_EQ(controller.Inspect("k")->durable.highest, 110u);
  auto stale = controller.Admit("k", 50, "r", Ignore(), 10);
  ASSERT_TRUE(stale.has_value());
  EXPECT_EQ(stale->kind, Kind::kStale);
  Raise(controller, store, 5000);
  EXPECT_EQ(controller.Inspect("k")->durable.highest, 5000u);
}

TEST(MaxAdvanceTest, NeverFencedKeyCountsFromZeroIncludingWhileLoading) {
  MemoryFenceStore store;
  store.SetDeferred(true);
  AdmissionController controller(store, Options());
  AdmissionDecision got;
  auto now = controller.Admit(
      "k", 1000, "r", [&](const AdmissionDecision& d) { got = d; }, 999);
  store.RunPending();  // the key's first read
  if (now) got = *now;
  EXPECT_EQ(got.kind, Kind::kTooFarAhead);
  EXPECT_EQ(store.advance_calls(), 0u);
  EXPECT_FALSE(controller.Inspect("k").has_value() &&
               controller.Inspect("k")->durable.highest != 0);
}

TEST(MaxAdvanceTest, BoundIsMeasuredFromAPendingAdvance) {
  MemoryFenceStore store;
  store.SetDeferred(true);
  AdmissionController controller(store, Options());
  Raise(controller, store, 10);
  // 20 is on its way to disk: the bound counts from it, not from the durable 10.
  EXPECT_FALSE(controller.Admit("k", 20, "a", Ignore(), 10).has_value());
  auto next = controller.Admit("k", 30, "b", Ignore(), 10);
  EXPECT_FALSE(next.has_value());  // 30 - 20 <= 10: joins the queue behind 20
  auto far = controller.Admit("k", 41, "c", Ignore(), 10);
  ASSERT_TRUE(far.has_value());
  EXPECT_EQ(far->kind, Kind::kTooFarAhead);
  EXPECT_EQ(far->highest, 30u);
  store.RunPending();
}

}  // namespace
}  // namespace fencegate::lockstore
