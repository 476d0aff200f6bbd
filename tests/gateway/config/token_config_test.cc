// locks.signing, require_signed_tokens, max_token_advance and verify_tokens (README "Tokens").
#include <cstdlib>

#include <gtest/gtest.h>

#include "gateway/config/config_loader.h"
#include "tests/gateway/config/config_text.h"

namespace fencegate::gateway {
namespace {

const std::string kRoutes = config_text::kOneFilesRoute;

const std::string kSecret = "0123456789abcdef0123456789abcdef";  // 32 bytes

using config_text::Load;
using config_text::ReadableFile;

TEST(TokenConfigTest, EveryKeyIsRead) {
  ::setenv("FENCEGATE_TEST_TOKEN_KEY", (kSecret + "env").c_str(), 1);
  Config config;
  const auto errors = Load(kRoutes +
                               "    require_signed_tokens: true\n"
                               "    max_token_advance: 1000000\n"
                               "locks:\n"
                               "  signing:\n"
                               "    key_id: k2\n"
                               "    keys:\n"
                               "      - id: k1\n"
                               "        secret: \"" +
                               kSecret +
                               "\"\n"
                               "      - id: k2\n"
                               "        secret_env: FENCEGATE_TEST_TOKEN_KEY\n",
                           &config);
  for (const auto& error : errors) ADD_FAILURE() << error.ToString();
  ASSERT_EQ(config.routes.size(), 1u);
  EXPECT_TRUE(config.routes[0].require_signed_tokens);
  EXPECT_EQ(config.routes[0].max_token_advance, 1000000u);
  EXPECT_EQ(config.locks.signing.signing_key_id, "k2");
  ASSERT_EQ(config.locks.signing.keys.size(), 2u);
  EXPECT_EQ(config.locks.signing.keys[0].secret, kSecret);
  EXPECT_EQ(config.locks.signing.keys[1].secret, kSecret + "env");
}

TEST(TokenConfigTest, DefaultsAreOff) {
  Config config;
  ASSERT_TRUE(Load(kRoutes, &config).empty());
  EXPECT_FALSE(config.routes[0].require_signed_tokens);
  EXPECT_EQ(config.routes[0].max_token_advance, 0u);
  EXPECT_TRUE(config.locks.signing.empty());
}

TEST(TokenConfigTest, ErrorsNameFileLineAndKey) {
  struct Case {
    std::string lines;
    int line;
    std::string key;
  };
  const std::string one_key = "    keys:\n      - id: k1\n        secret: \"" + kSecret + "\"\n";
  const std::vector<Case> cases = {
      {"    require_signed_tokens: true\n", 10, "routes[0].require_signed_tokens"},
      {"    max_token_advance: -3\n", 10, "routes[0].max_token_advance"},
      {"locks:\n  signing:\n    key_id: k9\n" + one_key, 12, "locks.signing.key_id"},
      {"locks:\n  signing:\n    key_id: k1\n    keys:\n      - id: k1\n        secret: short\n", 14,
       "locks.signing.keys[0].secret"},
      {"locks:\n  signing:\n    key_id: \"k 1\"\n    keys:\n      - id: \"k 1\"\n        secret: "
       "\"" +
           kSecret + "\"\n",
       14, "locks.signing.keys[0].id"},
      {"locks:\n  signing:\n    key_id: k1\n    keys:\n      - id: k1\n", 14,
       "locks.signing.keys[0].secret"},
      {"locks:\n  signing:\n    key_id: k1\n    keys: []\n", 13, "locks.signing.keys"},
      {"locks:\n  signing:\n    key_id: k1\n" + one_key + "        secrt: x\n", 16,
       "locks.signing.keys[0].secrt"},
      {"    require_signed_tokens: true\nlocks:\n  enabled: false\n  signing:\n    key_id: k1\n" +
           one_key,
       10, "routes[0].require_signed_tokens"},
  };
  for (const Case& c : cases) {
    Config config;
    const auto errors = Load(kRoutes + c.lines, &config);
    ASSERT_EQ(errors.size(), 1u) << c.lines;
    EXPECT_EQ(errors[0].file, "test.yaml");
    EXPECT_EQ(errors[0].line, c.line) << c.lines << errors[0].ToString();
    EXPECT_EQ(errors[0].key, c.key) << c.lines << errors[0].ToString();
  }
}

const std::string kVerify =
    "    max_token_advance: 1000\n"
    "    verify_tokens:\n"
    "      etcd:\n";

TEST(TokenConfigTest, VerifyTokensIsRead) {
  Config config;
  const auto errors = Load(kRoutes + kVerify +
                               "        endpoints: [\"127.0.0.1:2379\", \"localhost:2381\"]\n"
                               "        lock_name: \"jobs/{segment:2}\"\n"
                               "        timeout: 250ms\n"
                               "        tls:\n"
                               "          ca_file: " +
                               ReadableFile("etcd-ca.pem") +
                               "\n"
                               "          server_name: etcd.internal\n",
                           &config);
  for (const auto& error : errors) ADD_FAILURE() << error.ToString();
  ASSERT_TRUE(config.routes[0].verify_tokens.has_value());
  const TokenVerifyConfig& verify = *config.routes[0].verify_tokens;
  EXPECT_EQ(verify.endpoints, (std::vector<std::string>{"127.0.0.1:2379", "localhost:2381"}));
  EXPECT_EQ(verify.lock_name.source(), "jobs/{segment:2}");
  EXPECT_EQ(verify.timeout, std::chrono::milliseconds(250));
  ASSERT_TRUE(verify.tls.has_value());
  EXPECT_EQ(verify.tls->ca_file, ReadableFile("etcd-ca.pem"));
  EXPECT_EQ(verify.tls->server_name, "etcd.internal");
}

TEST(TokenConfigTest, VerifyTokensDefaults) {
  Config config;
  const auto errors = Load(kRoutes + kVerify +
                               "        endpoints: [\"127.0.0.1:2379\"]\n"
                               "        lock_name: jobs\n",
                           &config);
  for (const auto& error : errors) ADD_FAILURE() << error.ToString();
  ASSERT_TRUE(config.routes[0].verify_tokens.has_value());
  EXPECT_EQ(config.routes[0].verify_tokens->timeout, std::chrono::milliseconds(500));
  EXPECT_FALSE(config.routes[0].verify_tokens->tls.has_value());
  Config off;
  ASSERT_TRUE(Load(kRoutes, &off).empty());
  EXPECT_FALSE(off.routes[0].verify_tokens.has_value());
}

TEST(TokenConfigTest, VerifyTokensErrorsNameFileLineAndKey) {
  struct Case {
    std::string lines;
    int line;
    std::string key;
  };
  const std::string endpoints = "        endpoints: [\"127.0.0.1:2379\"]\n";
  const std::string lock_name = "        lock_name: \"jobs/{segment:2}\"\n";
  const std::string prefix = "routes[0].verify_tokens";
  const std::vector<Case> cases = {
      {kVerify + lock_name, 13, prefix + ".etcd.endpoints"},
      {kVerify + endpoints, 13, prefix + ".etcd.lock_name"},
      {kVerify + endpoints + "        lock_name: \"jobs/{segment}\"\n", 14,
       prefix + ".etcd.lock_name"},
      {kVerify + "        endpoints: [\"127.0.0.1\"]\n" + lock_name, 13,
       prefix + ".etcd.endpoints[0]"},
      {kVerify + endpoints + lock_name + "        timeout: soon\n", 15, prefix + ".etcd.timeout"},
      {kVerify + endpoints + lock_name + "        tls:\n          ca: x\n", 16,
       prefix + ".etcd.tls.ca"},
      {kVerify + endpoints + lock_name + "        endpoint: x\n", 15, prefix + ".etcd.endpoint"},
      {"    max_token_advance: 1000\n    verify_tokens:\n      zookeeper: {}\n", 12,
       prefix + ".zookeeper"},
      {"    verify_tokens:\n      etcd:\n" + endpoints + lock_name, 11, prefix},
  };
  for (const Case& c : cases) {
    Config config;
    const auto errors = Load(kRoutes + c.lines, &config);
    ASSERT_GE(errors.size(), 1u) << c.lines;
    EXPECT_EQ(errors[0].file, "test.yaml");
    EXPECT_EQ(errors[0].line, c.line) << c.lines << errors[0].ToString();
    EXPECT_EQ(errors[0].key, c.key) << c.lines << errors[0].ToString();
  }
}

}  // namespace
}  // namespace fencegate::gateway
