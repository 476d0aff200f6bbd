// The `store:` section's etcd kind (README "Running several replicas").
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "gateway/config/config_loader.h"
#include "tests/gateway/config/config_text.h"

namespace fencegate::gateway {
namespace {

const std::string kRoutes = config_text::kOneFilesRoute;

std::vector<ConfigError> Load(const std::string& text, Config* config) {
  return LoadConfigText(text + kRoutes, "store.yaml", config);
}

TEST(StoreConfigTest, EtcdKindWithEveryKey) {
  Config config;
  const auto errors = Load(
      "store:\n"
      "  kind: etcd\n"
      "  endpoints: [\"127.0.0.1:2379\", \"localhost:22379\", \"[::1]:32379\"]\n"
      "  prefix: /prod/fencegate/\n"
      "  request_timeout: 300ms\n"
      "  operation_timeout: 2s\n"
      "locks:\n"
      "  enabled: false\n",
      &config);
  for (const ConfigError& error : errors) ADD_FAILURE() << error.ToString();
  EXPECT_EQ(config.store.kind, "etcd");
  EXPECT_EQ(config.store.endpoints,
            (std::vector<std::string>{"127.0.0.1:2379", "localhost:22379", "[::1]:32379"}));
  EXPECT_EQ(config.store.prefix, "/prod/fencegate/");
  EXPECT_EQ(config.store.request_timeout, std::chrono::milliseconds(300));
  EXPECT_EQ(config.store.operation_timeout, std::chrono::milliseconds(2000));
}

TEST(StoreConfigTest, EtcdMistakesNameLineAndKey) {
  Config config;
  const auto errors = Load(
      "store:\n"                                 // 1
      "  kind: etcd\n"                           // 2: locks enabled: fine (state in etcd)
      "  endpoints: [\"127.0.0.1\", \"h:0\"]\n"  // 3: no port, port 0
      "  prefix: \"\"\n"                         // 4: empty
      "  operation_timeout: 0s\n"                // 5: zero
      "locks:\n"                                 // 6
      "  rules:\n"                               // 7
      "    - match: \"orders-*\"\n"              // 8
      "      fence_keys: [\"kv:{name}\"]\n"      // 9
      "    - match: \"delayed-*\"\n"             // 10
      "      quarantine: 1s\n",                  // 11: no lock-delay with etcd
      &config);
  std::vector<std::pair<int, std::string>> where;
  for (const ConfigError& error : errors) where.emplace_back(error.line, error.key);
  const std::vector<std::pair<int, std::string>> expected{
      {3, "store.endpoints[0]"},      {3, "store.endpoints[1]"},         {4, "store.prefix"},
      {5, "store.operation_timeout"}, {11, "locks.rules[1].quarantine"},
  };
  EXPECT_EQ(where, expected);
  for (const ConfigError& error : errors) {
    EXPECT_EQ(error.file, "store.yaml");
    if (error.key == "locks.rules[1].quarantine") {
      EXPECT_NE(error.message.find("lock-delay is not available"), std::string::npos)
          << error.message;
    }
  }
}

TEST(StoreConfigTest, EtcdNeedsEndpointsAndRocksdbRefusesEtcdKeys) {
  Config config;
  auto errors = Load("store:\n  kind: etcd\nlocks:\n  enabled: false\n", &config);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key, "store.endpoints");
  errors = Load("store:\n  endpoints: [\"127.0.0.1:2379\"]\n", &config);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key, "store.endpoints");
  EXPECT_NE(errors[0].message.find("only for store kind 'etcd'"), std::string::npos);
}

}  // namespace
}  // namespace fencegate::gateway
