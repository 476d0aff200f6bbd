// locks.signing, require_signed_tokens and max_token_advance (README "Tokens").
#include <cstdlib>

#include <gtest/gtest.h>

#include "gateway/config/config_loader.h"
#include "tests/gateway/config/config_text.h"

namespace fencegate::gateway {
namespace {

const std::string kRoutes = config_text::kOneFilesRoute;

const std::string kSecret = "0123456789abcdef0123456789abcdef";  // 32 bytes

using config_text::Load;

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

}  // namespace
}  // namespace fencegate::gateway
