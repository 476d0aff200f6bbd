// Per route disclose_highest_token (README "Refusals"): the values, the defaults with and
// without authentication, and errors naming file, line and key.
#include <gtest/gtest.h>

#include "gateway/config/config_loader.h"
#include "tests/gateway/config/config_text.h"

namespace fencegate::gateway {
namespace {

using config_text::Dump;
using config_text::kOneFilesRoute;
using config_text::Load;

const std::string kDisclosureTestPrincipals =
    "auth:\n"
    "  principals:\n"
    "    - name: writer\n"
    "      api_key_sha256: [\"" +
    std::string(64, 'a') + "\"]\n";

TEST(DisclosureConfigTest, EachValueIsRead) {
  for (const auto& [text, expected] :
       {std::pair{"always", HighestTokenDisclosure::kAlways},
        std::pair{"authenticated", HighestTokenDisclosure::kAuthenticated},
        std::pair{"never", HighestTokenDisclosure::kNever}}) {
    Config config;
    const auto errors = Load(
        kOneFilesRoute + "    disclose_highest_token: " + text + "\n" + kDisclosureTestPrincipals,
        &config);
    ASSERT_TRUE(errors.empty()) << Dump(errors);
    ASSERT_EQ(config.routes.size(), 1u);
    EXPECT_EQ(config.routes[0].disclose_highest_token, expected) << text;
  }
}

TEST(DisclosureConfigTest, DefaultIsAlwaysWithoutAuthenticationElseAuthenticated) {
  Config open;
  ASSERT_TRUE(Load(kOneFilesRoute, &open).empty());
  EXPECT_EQ(open.routes[0].disclose_highest_token, HighestTokenDisclosure::kAlways);
  Config authenticated;
  const auto errors = Load(kOneFilesRoute + kDisclosureTestPrincipals, &authenticated);
  ASSERT_TRUE(errors.empty()) << Dump(errors);
  EXPECT_EQ(authenticated.routes[0].disclose_highest_token, HighestTokenDisclosure::kAuthenticated);
}

TEST(DisclosureConfigTest, ErrorsNameFileLineAndKey) {
  struct Case {
    std::string lines;
    std::string message_part;
  };
  const std::vector<Case> cases = {
      {"    disclose_highest_token: sometimes\n", "'sometimes'"},
      {"    disclose_highest_token: [always]\n", "always"},
      // Nobody could be authenticated: the value would silently mean never.
      {"    disclose_highest_token: authenticated\n", "principals"},
  };
  for (const Case& c : cases) {
    const auto errors = Load(kOneFilesRoute + c.lines);
    ASSERT_EQ(errors.size(), 1u) << c.lines << Dump(errors);
    EXPECT_EQ(errors[0].file, "test.yaml");
    EXPECT_EQ(errors[0].line, 10) << errors[0].ToString();
    EXPECT_EQ(errors[0].key, "routes[0].disclose_highest_token") << errors[0].ToString();
    EXPECT_NE(errors[0].ToString().find(c.message_part), std::string::npos) << errors[0].ToString();
  }
}

}  // namespace
}  // namespace fencegate::gateway
