#include "gateway/auth/route_policy.h"

#include <gtest/gtest.h>

namespace fencegate::gateway::auth {
namespace {

CredentialsConfig Principals(std::initializer_list<const char*> names) {
  CredentialsConfig config;
  for (const char* name : names) config.principals.emplace_back().name = name;
  return config;
}

TEST(RoutePolicyTest, ReadWriteAndAdvanceAreSeparateGrants) {
  const Credentials credentials(Principals({"reader", "writer", "owner"}));
  RoutePolicyConfig config;
  config.read = {"reader", "writer", "owner"};
  config.write = {"writer", "owner"};
  config.advance = {{"owner", {"kv:a", "kv:b/"}}};
  const RoutePolicy policy(config, credentials);
  const std::size_t reader = *credentials.Find("reader");
  const std::size_t writer = *credentials.Find("writer");
  const std::size_t owner = *credentials.Find("owner");

  EXPECT_TRUE(policy.MayRead(reader));
  EXPECT_FALSE(policy.MayWrite(reader));
  EXPECT_TRUE(policy.MayWrite(writer));
  EXPECT_FALSE(policy.MayAdvance(writer, "kv:a"));
  EXPECT_TRUE(policy.MayAdvance(owner, "kv:a"));
  EXPECT_TRUE(policy.MayAdvance(owner, "kv:a/x"));  // a prefix, not a segment
  EXPECT_TRUE(policy.MayAdvance(owner, "kv:b/1"));
  EXPECT_FALSE(policy.MayAdvance(owner, "kv:b"));
  EXPECT_FALSE(policy.MayAdvance(owner, "kv:c"));
}

TEST(RoutePolicyTest, EveryoneAndEveryKey) {
  const Credentials credentials(Principals({"a", "b"}));
  RoutePolicyConfig config;
  config.read = {"*"};
  config.write = {"a"};
  config.advance = {{"*", {"jobs:"}}, {"a", {"*"}}};
  const RoutePolicy policy(config, credentials);
  const std::size_t a = *credentials.Find("a");
  const std::size_t b = *credentials.Find("b");
  EXPECT_TRUE(policy.MayRead(a));
  EXPECT_TRUE(policy.MayRead(b));
  EXPECT_FALSE(policy.MayWrite(b));
  EXPECT_TRUE(policy.MayAdvance(b, "jobs:1"));
  EXPECT_FALSE(policy.MayAdvance(b, "kv:1"));
  EXPECT_TRUE(policy.MayAdvance(a, "kv:1"));
}

TEST(RoutePolicyTest, EmptyPolicyGrantsNothing) {
  const Credentials credentials(Principals({"a"}));
  const RoutePolicy policy(RoutePolicyConfig{}, credentials);
  EXPECT_FALSE(policy.MayRead(0));
  EXPECT_FALSE(policy.MayWrite(0));
  EXPECT_FALSE(policy.MayAdvance(0, ""));
}

}  // namespace
}  // namespace fencegate::gateway::auth
