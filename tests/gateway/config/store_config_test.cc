// The `store:` section: the embedded store's group commit, and the etcd kind (README "Running
// several replicas").
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "gateway/config/config_loader.h"
#include "tests/gateway/config/config_text.h"

namespace fencegate::gateway {
namespace {

const std::string kRoutes = config_text::kOneFilesRoute;
using config_text::ReadableFile;

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

TEST(StoreConfigTest, GroupCommitWaitTakesMicroseconds) {
  Config config;
  EXPECT_EQ(config.store.group_commit_wait, std::chrono::microseconds(1000));  // the default
  auto errors = Load("store:\n  group_commit_wait: 250us\n", &config);
  for (const ConfigError& error : errors) ADD_FAILURE() << error.ToString();
  EXPECT_EQ(config.store.group_commit_wait, std::chrono::microseconds(250));
  errors = Load("store:\n  group_commit_wait: 0us\n", &config);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(config.store.group_commit_wait, std::chrono::microseconds(0));
  errors = Load("store:\n  group_commit_wait: 2ms\n", &config);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(config.store.group_commit_wait, std::chrono::microseconds(2000));
}

TEST(StoreConfigTest, RejectionQueueIsACountOfAtLeastOne) {
  Config config;
  EXPECT_EQ(config.store.rejection_queue, 4096u);  // the default
  auto errors = Load("store:\n  rejection_queue: 100\n", &config);
  for (const ConfigError& error : errors) ADD_FAILURE() << error.ToString();
  EXPECT_EQ(config.store.rejection_queue, 100u);
  errors = Load("store:\n  rejection_queue: 0\n", &config);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 2);
  EXPECT_EQ(errors[0].key, "store.rejection_queue");
  errors = Load(
      "store:\n  kind: etcd\n  endpoints: [\"127.0.0.1:2379\"]\n"
      "  rejection_queue: 10\nlocks:\n  enabled: false\n",
      &config);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key, "store.rejection_queue");
  EXPECT_NE(errors[0].message.find("only for store kind 'rocksdb'"), std::string::npos);
}

TEST(StoreConfigTest, AccessLogErrorLinesPerSecond) {
  Config config;
  EXPECT_EQ(config.access_log.error_lines_per_second, 10u);  // the default
  auto errors = Load("access_log:\n  error_lines_per_second: 0\n", &config);
  for (const ConfigError& error : errors) ADD_FAILURE() << error.ToString();
  EXPECT_EQ(config.access_log.error_lines_per_second, 0u);
  errors = Load("access_log:\n  error_lines_per_second: many\n", &config);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 2);
  EXPECT_EQ(errors[0].key, "access_log.error_lines_per_second");
}

TEST(StoreConfigTest, GroupCommitWaitMistakesNameLineAndKey) {
  Config config;
  auto errors = Load("store:\n  group_commit_wait: 5\n", &config);  // no unit
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 2);
  EXPECT_EQ(errors[0].key, "store.group_commit_wait");
  EXPECT_NE(errors[0].message.find("units us, ms, s"), std::string::npos) << errors[0].message;
  errors = Load("store:\n  group_commit_wait: 1s\n", &config);  // longer than any fsync
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("at most 100000us"), std::string::npos) << errors[0].message;
  errors = Load(
      "store:\n  kind: etcd\n  endpoints: [\"127.0.0.1:2379\"]\n"
      "  group_commit_wait: 1ms\nlocks:\n  enabled: false\n",
      &config);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 4);
  EXPECT_NE(errors[0].message.find("only for store kind 'rocksdb'"), std::string::npos);
}

TEST(StoreConfigTest, EtcdTlsWithEveryKey) {
  Config config;
  const auto errors = Load(
      "store:\n"
      "  kind: etcd\n"
      "  endpoints: [\"10.0.0.7:2379\"]\n"
      "  tls:\n"
      "    ca_file: " +
          ReadableFile("etcd-ca.pem") + "\n" +
          "    server_name: etcd.internal\n"
          "    verify_hostname: false\n"
          "    client_cert_file: " +
          ReadableFile("etcd-client.pem") + "\n" +
          "    client_key_file: " + ReadableFile("etcd-client.key") + "\n" +
          "locks:\n"
          "  enabled: false\n",
      &config);
  for (const ConfigError& error : errors) ADD_FAILURE() << error.ToString();
  ASSERT_TRUE(config.store.tls.has_value());
  EXPECT_EQ(config.store.tls->ca_file, ReadableFile("etcd-ca.pem"));
  EXPECT_EQ(config.store.tls->server_name, "etcd.internal");
  EXPECT_FALSE(config.store.tls->verify_hostname);
  EXPECT_EQ(config.store.tls->client_cert_file, ReadableFile("etcd-client.pem"));
  EXPECT_EQ(config.store.tls->client_key_file, ReadableFile("etcd-client.key"));

  // An empty mapping: HTTPS with the system trust store, names verified.
  Config defaults;
  const auto more = Load(
      "store:\n  kind: etcd\n  endpoints: [\"127.0.0.1:2379\"]\n  tls: {}\n"
      "locks:\n  enabled: false\n",
      &defaults);
  for (const ConfigError& error : more) ADD_FAILURE() << error.ToString();
  ASSERT_TRUE(defaults.store.tls.has_value());
  EXPECT_TRUE(defaults.store.tls->ca_file.empty());
  EXPECT_TRUE(defaults.store.tls->verify_hostname);
  Config plain;
  EXPECT_TRUE(Load("store:\n  kind: etcd\n  endpoints: [\"127.0.0.1:2379\"]\n"
                   "locks:\n  enabled: false\n",
                   &plain)
                  .empty());
  EXPECT_FALSE(plain.store.tls.has_value());
}

TEST(StoreConfigTest, EtcdTlsMistakesNameLineAndKey) {
  Config config;
  const auto errors = Load(
      "store:\n"                             // 1
      "  kind: etcd\n"                       // 2
      "  endpoints: [\"127.0.0.1:2379\"]\n"  // 3
      "  tls:\n"                             // 4
      "    ca_file: " +
          ReadableFile("ca.pem") +
          "\n"  // 5
          "    client_cert_file: " +
          ReadableFile("c.pem") +
          "\n"                              // 6: without client_key_file
          "    verify_hostname: perhaps\n"  // 7: not a boolean
          "    ca_path: /etc/ssl\n"         // 8: unknown
          "locks:\n"
          "  enabled: false\n",
      &config);
  std::vector<std::pair<int, std::string>> where;
  for (const ConfigError& error : errors) where.emplace_back(error.line, error.key);
  // Line 5: the pairing is reported at the mapping (its first key's line).
  const std::vector<std::pair<int, std::string>> expected{
      {5, "store.tls.client_key_file"}, {7, "store.tls.verify_hostname"}, {8, "store.tls.ca_path"}};
  EXPECT_EQ(where, expected);

  // TLS to etcd belongs to the etcd kind.
  const auto rocksdb = Load("store:\n  tls: {ca_file: /ca.pem}\n", &config);
  ASSERT_EQ(rocksdb.size(), 1u);
  EXPECT_EQ(rocksdb[0].key, "store.tls");
  EXPECT_EQ(rocksdb[0].line, 2);
}

TEST(StoreConfigTest, MaxTxnOpsIsForEtcdOnlyAndAtLeastOne) {
  Config config;
  EXPECT_EQ(config.store.max_txn_ops, 128u);  // the default, etcd's own --max-txn-ops
  auto errors =
      Load("store:\n  kind: etcd\n  endpoints: [\"127.0.0.1:2379\"]\n  max_txn_ops: 64\n", &config);
  for (const ConfigError& error : errors) ADD_FAILURE() << error.ToString();
  EXPECT_EQ(config.store.max_txn_ops, 64u);
  errors =
      Load("store:\n  kind: etcd\n  endpoints: [\"127.0.0.1:2379\"]\n  max_txn_ops: 0\n", &config);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 4);
  EXPECT_EQ(errors[0].key, "store.max_txn_ops");
  errors = Load("store:\n  max_txn_ops: 64\n", &config);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key, "store.max_txn_ops");
  EXPECT_NE(errors[0].message.find("only for store kind 'etcd'"), std::string::npos);
}

}  // namespace
}  // namespace fencegate::gateway
