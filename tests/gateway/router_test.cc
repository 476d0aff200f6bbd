#include "gateway/http/router.h"

#include <gtest/gtest.h>

namespace fencegate::gateway {
namespace {

RouteConfig MakeRoute(std::string name, std::string prefix, std::string host = "") {
  RouteConfig route;
  route.name = std::move(name);
  route.prefix = std::move(prefix);
  route.host = std::move(host);
  return route;
}

TEST(RouterTest, LongestPrefixWins) {
  const Router router({MakeRoute("api", "/api/"), MakeRoute("inventory", "/api/inventory/"),
                       MakeRoute("root", "/")});
  EXPECT_EQ(router.Match("example.com", "/api/inventory/42"), 1u);
  EXPECT_EQ(router.Match("example.com", "/api/orders/7"), 0u);
  EXPECT_EQ(router.Match("example.com", "/other"), 2u);
}

TEST(RouterTest, HostRouteBeatsHostlessRouteOfSamePrefix) {
  const Router router({MakeRoute("any", "/files/"), MakeRoute("tenant", "/files/", "a.example")});
  EXPECT_EQ(router.Match("a.example", "/files/x"), 1u);
  EXPECT_EQ(router.Match("b.example", "/files/x"), 0u);
}

TEST(RouterTest, HostComparesCaseInsensitivelyWithoutPort) {
  const Router router({MakeRoute("tenant", "/files/", "A.Example")});
  EXPECT_EQ(router.Match("a.EXAMPLE:8080", "/files/x"), 0u);
  EXPECT_EQ(router.Match("a.example", "/files/x"), 0u);
  EXPECT_FALSE(router.Match("b.example:8080", "/files/x").has_value());
}

TEST(RouterTest, LongerHostlessPrefixBeatsShorterHostPrefix) {
  const Router router(
      {MakeRoute("tenant", "/files/", "a.example"), MakeRoute("deep", "/files/deep/")});
  EXPECT_EQ(router.Match("a.example", "/files/deep/x"), 1u);
}

TEST(RouterTest, NoMatch) {
  const Router router({MakeRoute("files", "/files/")});
  EXPECT_FALSE(router.Match("example.com", "/file").has_value());
  EXPECT_FALSE(router.Match("example.com", "*").has_value());
  EXPECT_FALSE(Router({}).Match("example.com", "/").has_value());
}

TEST(HostWithoutPortTest, StripsPortsKeepsBracketedIpv6) {
  EXPECT_EQ(HostWithoutPort("example.com:8080"), "example.com");
  EXPECT_EQ(HostWithoutPort("example.com"), "example.com");
  EXPECT_EQ(HostWithoutPort("[::1]:80"), "[::1]");
  EXPECT_EQ(HostWithoutPort("[::1]"), "[::1]");
  EXPECT_EQ(HostWithoutPort(""), "");
}

}  // namespace
}  // namespace fencegate::gateway
