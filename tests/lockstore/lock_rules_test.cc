#include "lockstore/locks/lock_rules.h"

#include <gtest/gtest.h>

namespace fencegate::lockstore {
namespace {

TEST(LockRulesTest, GlobMatching) {
  EXPECT_TRUE(GlobMatch("orders-*", "orders-1"));
  EXPECT_TRUE(GlobMatch("orders-*", "orders-"));
  EXPECT_FALSE(GlobMatch("orders-*", "order-1"));
  EXPECT_TRUE(GlobMatch("*", "anything"));
  EXPECT_TRUE(GlobMatch("a*b*c", "axxbyyc"));
  EXPECT_FALSE(GlobMatch("a*b*c", "axxbyy"));
  EXPECT_TRUE(GlobMatch("exact", "exact"));
  EXPECT_FALSE(GlobMatch("exact", "exactly"));
}

TEST(LockRulesTest, FirstMatchingRuleWinsAndRendersName) {
  LockRules rules({{"orders-*", {"kv:{name}", "{name}/{name}"}, std::chrono::milliseconds(5)},
                   {"*", {"all"}, std::chrono::milliseconds(0)}});
  const LockPolicy orders = rules.Resolve("orders-9");
  EXPECT_EQ(orders.fence_keys, (std::vector<std::string>{"kv:orders-9", "orders-9/orders-9"}));
  EXPECT_EQ(orders.quarantine.count(), 5);
  EXPECT_EQ(rules.Resolve("other").fence_keys, std::vector<std::string>{"all"});
  EXPECT_TRUE(LockRules().Resolve("x").fence_keys.empty());
}

TEST(LockRulesTest, NamesPatternsAndTemplatesAreValidated) {
  EXPECT_TRUE(IsValidLockName("orders-1.a_b:c"));
  EXPECT_FALSE(IsValidLockName(""));
  EXPECT_FALSE(IsValidLockName("a/b"));
  EXPECT_FALSE(IsValidLockName("a*"));
  EXPECT_FALSE(IsValidLockName(std::string(129, 'a')));
  EXPECT_TRUE(IsValidLockPattern("orders-*"));
  EXPECT_FALSE(IsValidLockPattern("orders/*"));
  EXPECT_TRUE(ValidateLockFenceKeyTemplate("kv:{name}").ok());
  EXPECT_FALSE(ValidateLockFenceKeyTemplate("kv:{path}").ok());
  EXPECT_FALSE(ValidateLockFenceKeyTemplate("").ok());
}

}  // namespace
}  // namespace fencegate::lockstore
