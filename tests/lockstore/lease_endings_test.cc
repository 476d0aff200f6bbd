#include "lockstore/locks/lease_endings.h"

#include <gtest/gtest.h>

namespace fencegate::lockstore {
namespace {

TEST(LeaseEndingsTest, ReasonNamesAreTheDocumentedSlugs) {
  EXPECT_EQ(StaleReasonName(StaleReason::kSuperseded), "superseded");
  EXPECT_EQ(StaleReasonName(StaleReason::kLeaseExpired), "lease-expired");
  EXPECT_EQ(StaleReasonName(StaleReason::kForceReleased), "force-released");
  EXPECT_EQ(StaleReasonName(StaleReason::kReleased), "released");
}

TEST(LeaseEndingsTest, EachEndedTokenOfABoundLockIsExplained) {
  LeaseEndings endings;
  endings.BindFenceKeys("job", {"kv:job", "audit:job"});
  endings.Ended("job", 1, StaleReason::kReleased);
  endings.Ended("job", 2, StaleReason::kLeaseExpired);
  endings.Ended("job", 3, StaleReason::kForceReleased);
  endings.SetAuditId("job", 3, 42);
  EXPECT_EQ(endings.Explain("kv:job", 1).reason, StaleReason::kReleased);
  EXPECT_EQ(endings.Explain("audit:job", 2).reason, StaleReason::kLeaseExpired);
  const StaleTokenExplanation forced = endings.Explain("kv:job", 3);
  EXPECT_EQ(forced.reason, StaleReason::kForceReleased);
  EXPECT_EQ(forced.audit_id, 42u);
  EXPECT_EQ(endings.Explain("kv:job", 2).audit_id, 0u);
}

TEST(LeaseEndingsTest, TokensNotIssuedForTheKeyAreSuperseded) {
  LeaseEndings endings;
  endings.BindFenceKeys("job", {"kv:job"});
  endings.Ended("job", 5, StaleReason::kReleased);
  endings.Ended("other", 7, StaleReason::kLeaseExpired);
  // A token the lock never ended (the current holder's, or one from another lock service).
  EXPECT_EQ(endings.Explain("kv:job", 6).reason, StaleReason::kSuperseded);
  // A key no grant raised, even for a number the lock did issue.
  EXPECT_EQ(endings.Explain("kv:unbound", 5).reason, StaleReason::kSuperseded);
  // A lock whose grants raise no fence key: its endings explain nothing.
  EXPECT_EQ(endings.Explain("kv:other", 7).reason, StaleReason::kSuperseded);
}

TEST(LeaseEndingsTest, KeepsOnlyTheLastEndingsOfALock) {
  LeaseEndings endings;
  endings.BindFenceKeys("job", {"kv:job"});
  const Token last = LeaseEndings::kKeptEndings + 1;
  for (Token token = 1; token <= last; ++token) endings.Ended("job", token, StaleReason::kReleased);
  EXPECT_EQ(endings.Explain("kv:job", 1).reason, StaleReason::kSuperseded);
  EXPECT_EQ(endings.Explain("kv:job", 2).reason, StaleReason::kReleased);
  EXPECT_EQ(endings.Explain("kv:job", last).reason, StaleReason::kReleased);
}

TEST(LeaseEndingsTest, ForgetDropsTheLockAndItsKeys) {
  LeaseEndings endings;
  endings.BindFenceKeys("job", {"kv:job"});
  endings.Ended("job", 1, StaleReason::kLeaseExpired);
  endings.Forget("job");
  EXPECT_EQ(endings.Explain("kv:job", 1).reason, StaleReason::kSuperseded);
  // Bound again by a later grant, the key is explained from the new endings only.
  endings.BindFenceKeys("job", {"kv:job"});
  endings.Ended("job", 2, StaleReason::kReleased);
  EXPECT_EQ(endings.Explain("kv:job", 1).reason, StaleReason::kSuperseded);
  EXPECT_EQ(endings.Explain("kv:job", 2).reason, StaleReason::kReleased);
}

TEST(LeaseEndingsTest, AKeyRaisedByAnotherLockFollowsTheLastGrant) {
  LeaseEndings endings;
  endings.BindFenceKeys("a", {"kv:shared"});
  endings.Ended("a", 1, StaleReason::kReleased);
  endings.BindFenceKeys("b", {"kv:shared"});
  endings.Ended("b", 1, StaleReason::kLeaseExpired);
  EXPECT_EQ(endings.Explain("kv:shared", 1).reason, StaleReason::kLeaseExpired);
  // Forgetting the lock that no longer owns the key leaves the key to the other.
  endings.Forget("a");
  EXPECT_EQ(endings.Explain("kv:shared", 1).reason, StaleReason::kLeaseExpired);
}

}  // namespace
}  // namespace fencegate::lockstore
