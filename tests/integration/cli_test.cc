#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/fencegate_run.h"
#include "tests/integration/gateway_instance.h"
#include "tests/integration/process.h"
#include "tests/integration/recording_backend.h"
#include "tests/integration/temp_dir.h"

namespace fencegate::integration {
namespace {

using ::testing::HasSubstr;

TEST(CliTest, CheckConfigAcceptsTheShippedConfigs) {
  for (const char* relative : {"/config/fencegate.yaml", "/config/examples/full-reference.yaml",
                               "/config/examples/http-backend.yaml"}) {
    const std::string path = std::string(FENCEGATE_SOURCE_DIR) + relative;
    Finished finished = RunFencegate({"--check-config", path});
    EXPECT_EQ(finished.status, 0) << finished.stderr_text;
    EXPECT_THAT(finished.stdout_text, HasSubstr(path + ": OK"));
  }
}

TEST(CliTest, CheckConfigReportsEveryErrorWithItsLine) {
  TempDir dir;
  const std::string path = dir.WriteFile("bad.yaml",
                                         "listen: 127.0.0.1:8080\n"
                                         "timeouts:\n"
                                         "  idle: forever\n"  // line 3
                                         "backends:\n"
                                         "  api: {kind: http, url: \"http://127.0.0.1:1\"}\n"
                                         "routes:\n"
                                         "  - name: a\n"
                                         "    prefix: /a/\n"
                                         "    backend: api\n"
                                         "    fence_kee: \"a\"\n");  // line 10
  Finished finished = RunFencegate({"--check-config", path});
  EXPECT_EQ(finished.status, 1);
  EXPECT_THAT(finished.stderr_text, HasSubstr(path + ":3:9: timeouts.idle: "));
  EXPECT_THAT(finished.stderr_text, HasSubstr(path + ":10:5: routes[0].fence_kee: unknown key"));
}

TEST(CliTest, VersionAndUsageErrors) {
  Finished version = RunFencegate({"--version"});
  EXPECT_EQ(version.status, 0);
  EXPECT_THAT(version.stdout_text, HasSubstr("fencegate"));

  Finished unknown = RunFencegate({"--no-such-option"});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_THAT(unknown.stderr_text, HasSubstr("--no-such-option"));

  Finished missing = RunFencegate({"--config", "/nonexistent/fencegate.yaml"});
  EXPECT_EQ(missing.status, 1);
  EXPECT_THAT(missing.stderr_text, HasSubstr("/nonexistent/fencegate.yaml"));
}

TEST(CliTest, ListenerInUseIsAStartupFailure) {
  TempDir dir;
  RecordingBackend occupant;  // holds a listening socket on its port
  Finished finished =
      RunFencegate({"--config", std::string(FENCEGATE_SOURCE_DIR) + "/config/fencegate.yaml",
                    "--listen", "127.0.0.1:" + std::to_string(occupant.port()), "--admin-listen",
                    "127.0.0.1:0", "--data-dir", dir.Join("data")});
  EXPECT_EQ(finished.status, 3) << finished.stderr_text;
  EXPECT_EQ(finished.stdout_text.find("fencegate listening"), std::string::npos);
}

}  // namespace
}  // namespace fencegate::integration
