#include "lockstore/fence/advance_history.h"

#include <gtest/gtest.h>

#include "lockstore/fence/admission.h"
#include "lockstore/fence/memory_fence_store.h"
#include "tests/lockstore/admission_test_support.h"

namespace fencegate::lockstore {
namespace {

TEST(AdvanceHistoryTest, ListsOneKeysAdvancesNewestFirst) {
  AdvanceHistory history(8);
  history.Record("a", 1, 100, "r1");
  history.Record("b", 5, 150, "r2");
  history.Record("a", 3, 200, "r3");
  const std::vector<AdvanceEntry> a = history.ForKey("a", 10);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].token, 3u);
  EXPECT_EQ(a[0].at_ms, 200);
  EXPECT_EQ(a[0].request_id, "r3");
  EXPECT_EQ(a[1].token, 1u);
  EXPECT_EQ(history.ForKey("a", 1).size(), 1u);
  EXPECT_TRUE(history.ForKey("c", 10).empty());
}

TEST(AdvanceHistoryTest, KeepsOnlyTheMostRecentCapacityAdvances) {
  AdvanceHistory history(3);
  for (Token token = 1; token <= 5; ++token) history.Record("k", token, 0, "r");
  const std::vector<AdvanceEntry> kept = history.ForKey("k", 10);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0].token, 5u);
  EXPECT_EQ(kept[2].token, 3u);
}

TEST(AdvanceHistoryTest, AdmissionRecordsEachDurableAdvanceOnce) {
  MemoryFenceStore store;
  AdvanceHistory history(16);
  AdmissionOptions options;
  options.now_ms = [] { return std::int64_t{1234}; };
  options.advance_history = &history;
  AdmissionController controller(store, options);
  testing::Decisions decisions;
  // The memory store calls back inline: each advance is decided at once or through the callback.
  for (const auto& [token, request] :
       std::vector<std::pair<Token, std::string>>{{4, "w1"}, {4, "w2"}, {9, "w3"}}) {
    auto decision = controller.Admit("files:/a", token, request, decisions.Callback());
    if (decision) {
      EXPECT_EQ(decision->kind, AdmissionDecision::Kind::kAdmitted);
    }
    controller.Complete("files:/a", token);
  }
  for (const AdmissionDecision& decision : decisions.received()) {
    EXPECT_EQ(decision.kind, AdmissionDecision::Kind::kAdmitted);
  }
  const std::vector<AdvanceEntry> kept = history.ForKey("files:/a", 10);
  ASSERT_EQ(kept.size(), 2u);  // the second write at 4 raised nothing
  EXPECT_EQ(kept[0].token, 9u);
  EXPECT_EQ(kept[0].request_id, "w3");
  EXPECT_EQ(kept[0].at_ms, 1234);
  EXPECT_EQ(kept[1].token, 4u);
  EXPECT_EQ(kept[1].request_id, "w1");
}

}  // namespace
}  // namespace fencegate::lockstore
