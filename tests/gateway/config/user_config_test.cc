// The top-level `user:` and `group:` (docs/OPERATIONS.md "Running as another user").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gateway/config/config_loader.h"
#include "tests/gateway/config/config_text.h"

namespace fencegate::gateway {
namespace {

std::vector<ConfigError> LoadUserConfig(const std::string& text, Config* config) {
  return LoadConfigText(text + config_text::kOneFilesRoute, "user.yaml", config);
}

TEST(UserConfigTest, AbsentByDefault) {
  Config config;
  EXPECT_TRUE(LoadUserConfig("", &config).empty());
  EXPECT_EQ(config.user, "");
  EXPECT_EQ(config.group, "");
}

TEST(UserConfigTest, UserAndGroupAreRead) {
  Config config;
  const auto errors = LoadUserConfig("user: fencegate\ngroup: www-data\n", &config);
  for (const ConfigError& error : errors) ADD_FAILURE() << error.ToString();
  EXPECT_EQ(config.user, "fencegate");
  EXPECT_EQ(config.group, "www-data");
}

TEST(UserConfigTest, EmptyUserAndGroupWithoutUserAreErrorsWithTheirLines) {
  Config config;
  const auto errors = LoadUserConfig("user: \"\"\n", &config);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].ToString().find("user.yaml:1:"), std::string::npos) << errors[0].ToString();
  EXPECT_NE(errors[0].ToString().find("must not be empty"), std::string::npos);

  const auto group_only = LoadUserConfig("threads: 2\ngroup: fencegate\n", &config);
  ASSERT_EQ(group_only.size(), 1u);
  EXPECT_NE(group_only[0].ToString().find("user.yaml:2:"), std::string::npos)
      << group_only[0].ToString();
  EXPECT_NE(group_only[0].ToString().find("needs user"), std::string::npos);
}

}  // namespace
}  // namespace fencegate::gateway
