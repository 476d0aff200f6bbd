// GatewayConfig writes YAML the gateway's own loader reads back as the tree the test built.
#include "tests/support/gateway_config.h"

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gateway/config/config_loader.h"
#include "tests/support/temp_dir.h"

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

TEST(GatewayConfigTest, AFileReadBackKeepsItsKeysBesideTheTestsOwn) {
  const TempDir dir;
  GatewayConfig built = GatewayConfig::FromFile(dir.WriteFile(
      "shipped.yaml",
      "# a comment\nbackends:\n  files: {kind: filesystem, root: \"{data_dir}/files\"}\n"
      "routes:\n  - {name: files, prefix: /files/, backend: files, fence_key: "
      "\"files:{path}\"}\n"));
  built["timeouts"]["response_write"] = "1s";
  Config config;
  const auto errors = LoadConfigText(built.Yaml(), "built.yaml", &config);
  ASSERT_TRUE(errors.empty()) << Dump(errors) << built.Yaml();
  EXPECT_EQ(config.timeouts.response_write, std::chrono::seconds(1));
  ASSERT_EQ(config.routes.size(), 1u);
  EXPECT_EQ(config.routes[0].name, "files");
  EXPECT_EQ(config.backends.at("files").data_dir_path_as_written, "{data_dir}/files");
}

TEST(GatewayConfigTest, FilesystemRouteTlsListenerAndExtraKeysLoad) {
  const TempDir dir;
  const std::string cert = dir.WriteFile("server.pem", "certificate\n");
  const std::string key = dir.WriteFile("server.key", "key\n");
  GatewayConfig built;
  built.Backend("files") = FilesystemBackendAt("/srv/files");
  YAML::Node extra;
  extra["sync_writes"] = false;
  SetKeys(built.Backend("files"), extra);
  built.Route("files", "/files/", "files", "files:{path}");
  built["tls"]["traffic"] = TlsListener(cert, key);
  built["tls"]["traffic"]["client_ca_file"] = cert;
  built["tls"]["traffic"]["client_auth"] = "optional";
  Config config;
  const auto errors = LoadConfigText(built.Yaml(), "built.yaml", &config);
  ASSERT_TRUE(errors.empty()) << Dump(errors) << built.Yaml();
  ASSERT_EQ(config.backends.count("files"), 1u);
  EXPECT_EQ(config.backends.at("files").kind, "filesystem");
  EXPECT_EQ(config.backends.at("files").filesystem.root, "/srv/files");
  EXPECT_FALSE(config.backends.at("files").filesystem.sync_writes);
  ASSERT_EQ(config.routes.size(), 1u);
  EXPECT_EQ(config.routes[0].prefix, "/files/");
  EXPECT_EQ(config.routes[0].backend, "files");
  EXPECT_TRUE(config.tls.traffic.enabled);
  EXPECT_EQ(config.tls.traffic.cert_file, cert);
  EXPECT_EQ(config.tls.traffic.key_file, key);
  EXPECT_EQ(config.tls.traffic.client_auth, gateway::tls::ClientAuth::kOptional);
  EXPECT_FALSE(config.tls.admin.enabled);
}

}  // namespace
}  // namespace fencegate::integration
