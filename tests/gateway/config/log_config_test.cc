#include <string>

#include <gtest/gtest.h>

#include "gateway/config/config_loader.h"
#include "tests/gateway/config/config_text.h"

namespace fencegate::gateway {
namespace {

using config_text::kOneFilesRoute;
using config_text::Load;

TEST(LogConfigTest, DefaultsAreStandardErrorAtInfoAndGeneratedTraces) {
  Config config;
  ASSERT_TRUE(Load(kOneFilesRoute, &config).empty());
  EXPECT_EQ(config.log.path, "-");
  EXPECT_EQ(config.log.level, log::Level::kInfo);
  EXPECT_TRUE(config.trace_context.generate);
}

TEST(LogConfigTest, ReadsPathLevelAndGenerate) {
  Config config;
  const std::vector<ConfigError> errors = Load(kOneFilesRoute +
                                                   "log:\n"
                                                   "  path: /var/log/fencegate/events.log\n"
                                                   "  level: warn\n"
                                                   "trace_context:\n"
                                                   "  generate: false\n",
                                               &config);
  ASSERT_TRUE(errors.empty()) << errors.front().ToString();
  EXPECT_EQ(config.log.path, "/var/log/fencegate/events.log");
  EXPECT_EQ(config.log.level, log::Level::kWarn);
  EXPECT_FALSE(config.trace_context.generate);
}

TEST(LogConfigTest, RefusesAnUnknownLevelAndKey) {
  const std::vector<ConfigError> errors = Load(kOneFilesRoute +
                                               "log:\n"               // line 10
                                               "  level: debug\n"     // line 11
                                               "trace_context:\n"     // line 12
                                               "  propagate: no\n");  // line 13
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].key, "log.level");
  EXPECT_EQ(errors[0].line, 11);
  EXPECT_NE(errors[0].message.find("'info', 'warn' or 'error'"), std::string::npos)
      << errors[0].message;
  EXPECT_EQ(errors[1].line, 13);
  EXPECT_NE(errors[1].ToString().find("propagate"), std::string::npos) << errors[1].ToString();
}

}  // namespace
}  // namespace fencegate::gateway
