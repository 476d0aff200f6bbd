#include <gtest/gtest.h>

#include "gateway/config/config_loader.h"

namespace fencegate::gateway {
namespace {

const std::string kRoute =
    "backends:\n"
    "  api:\n"
    "    kind: http\n"
    "    url: http://127.0.0.1:8081\n"
    "routes:\n"
    "  - name: orders\n"
    "    prefix: /orders/\n"
    "    backend: api\n"
    "    fence_key: \"orders:{segment:2}\"\n";  // 9 lines

std::vector<ConfigError> Load(const std::string& text, Config* config) {
  return LoadConfigText(text, "test.yaml", config);
}

TEST(IdempotencyConfigTest, AbsentMeansOff) {
  Config config;
  ASSERT_TRUE(Load(kRoute, &config).empty());
  EXPECT_FALSE(config.routes[0].idempotency.has_value());
}

TEST(IdempotencyConfigTest, EmptyMappingTakesTheDefaults) {
  Config config;
  ASSERT_TRUE(Load(kRoute + "    idempotency: {}\n", &config).empty());
  ASSERT_TRUE(config.routes[0].idempotency.has_value());
  const IdempotencyConfig& idempotency = *config.routes[0].idempotency;
  EXPECT_EQ(idempotency.mode, IdempotencyConfig::Mode::kStore);
  EXPECT_FALSE(idempotency.required);
  EXPECT_EQ(idempotency.methods, (std::vector<std::string>{"POST", "PATCH"}));
  EXPECT_EQ(idempotency.header, "Idempotency-Key");
  EXPECT_EQ(idempotency.expire_after, std::chrono::hours(24));
  EXPECT_EQ(idempotency.max_response_bytes, 1u << 20);
  EXPECT_TRUE(idempotency.identity_header.empty());
}

TEST(IdempotencyConfigTest, EveryKeyIsRead) {
  Config config;
  const auto errors = Load(kRoute +
                               "    idempotency:\n"
                               "      mode: forward\n"
                               "      required: true\n"
                               "      methods: [POST, PUT]\n"
                               "      header: X-Idempotency-Key\n"
                               "      expire_after: 2h\n"
                               "      max_response_bytes: 64KiB\n"
                               "      identity_header: X-Client-Id\n"
                               "      forward_header: Stripe-Idempotency-Key\n",
                           &config);
  for (const auto& error : errors) ADD_FAILURE() << error.ToString();
  ASSERT_TRUE(config.routes[0].idempotency.has_value());
  const IdempotencyConfig& idempotency = *config.routes[0].idempotency;
  EXPECT_EQ(idempotency.mode, IdempotencyConfig::Mode::kForward);
  EXPECT_TRUE(idempotency.required);
  EXPECT_EQ(idempotency.methods, (std::vector<std::string>{"POST", "PUT"}));
  EXPECT_EQ(idempotency.header, "X-Idempotency-Key");
  EXPECT_EQ(idempotency.expire_after, std::chrono::hours(2));
  EXPECT_EQ(idempotency.max_response_bytes, 64u << 10);
  EXPECT_EQ(idempotency.identity_header, "X-Client-Id");
  EXPECT_EQ(idempotency.forward_header, "Stripe-Idempotency-Key");
}

TEST(IdempotencyConfigTest, ErrorsNameLineAndKey) {
  Config config;
  const auto errors = Load(kRoute +
                               "    idempotency:\n"
                               "      mode: cache\n"           // line 11
                               "      expire_after: 0s\n"      // line 12
                               "      header: \"bad name\"\n"  // line 13
                               "      replay: true\n",         // line 14
                           &config);
  ASSERT_EQ(errors.size(), 4u);
  std::string all;
  for (const auto& error : errors) all += error.ToString() + "\n";
  EXPECT_NE(all.find("test.yaml:11"), std::string::npos) << all;
  EXPECT_NE(all.find("routes[0].idempotency.mode: expected 'store' or 'forward'; got 'cache'"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("test.yaml:12"), std::string::npos) << all;
  EXPECT_NE(all.find("routes[0].idempotency.expire_after"), std::string::npos) << all;
  EXPECT_NE(all.find("test.yaml:13"), std::string::npos) << all;
  EXPECT_NE(all.find("routes[0].idempotency.header"), std::string::npos) << all;
  EXPECT_NE(all.find("routes[0].idempotency.replay"), std::string::npos) << all;
}

}  // namespace
}  // namespace fencegate::gateway
