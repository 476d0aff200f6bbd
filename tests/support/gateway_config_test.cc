// GatewayConfig writes YAML the gateway's own loader reads back as the tree the test built.
#include "tests/support/gateway_config.h"

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gateway/config/config_loader.h"

namespace fencegate::integration {
namespace {

using gateway::Config;
using gateway::ConfigError;
using gateway::LoadConfigText;

std::string Dump(const std::vector<ConfigError>& errors) {
  std::string out;
  for (const ConfigError& error : errors) out += error.ToString() + "\n";
  return out;
}

TEST(GatewayConfigTest, TheSharedDefaultsLoad) {
  const GatewayConfig built = GatewayConfig::HttpBackend(4321, "/tmp/access.log");
  Config config;
  const auto errors = LoadConfigText(built.Yaml(), "built.yaml", &config);
  ASSERT_TRUE(errors.empty()) << Dump(errors) << built.Yaml();
  EXPECT_EQ(config.access_log.path, "/tmp/access.log");
  EXPECT_EQ(config.timeouts.shutdown_drain, std::chrono::seconds(10));
  ASSERT_EQ(config.backends.count("api"), 1u);
  EXPECT_EQ(config.backends.at("api").kind, "http");
  ASSERT_EQ(config.routes.size(), 1u);
  EXPECT_EQ(config.routes[0].name, "kv");
  EXPECT_EQ(config.routes[0].prefix, "/kv/");
  EXPECT_EQ(config.routes[0].backend, "api");
}

TEST(GatewayConfigTest, KeysSetByATestReachTheLoadedConfig) {
  GatewayConfig built = GatewayConfig::HttpBackend(4321);
  built["timeouts"]["shutdown_drain"] = "200ms";
  built.Route("kv")["fence_reads"] = true;
  built.Route("kv")["fenced_methods"].push_back("PUT");
  built.Route("kv")["max_token_advance"] = 10;
  YAML::Node other = built.Route("other");
  other["prefix"] = "/other/";
  other["backend"] = "down";
  other["fence_key"] = "other:{segment:2}";
  other["idempotency"] = YAML::Node(YAML::NodeType::Map);
  built.Backend("down") = HttpBackendAt(1);
  Config config;
  const auto errors = LoadConfigText(built.Yaml(), "built.yaml", &config);
  ASSERT_TRUE(errors.empty()) << Dump(errors) << built.Yaml();
  EXPECT_EQ(config.timeouts.shutdown_drain, std::chrono::milliseconds(200));
  ASSERT_EQ(config.routes.size(), 2u);
  EXPECT_TRUE(config.routes[0].fence_reads);
  EXPECT_EQ(config.routes[0].fenced_methods, std::vector<std::string>{"PUT"});
  EXPECT_EQ(config.routes[0].max_token_advance, 10u);
  EXPECT_EQ(config.routes[1].name, "other");
  EXPECT_TRUE(config.routes[1].idempotency.has_value());
  EXPECT_EQ(config.backends.count("down"), 1u);
}

}  // namespace
}  // namespace fencegate::integration
