#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gateway/config/config_loader.h"

namespace fencegate::gateway {
namespace {

using std::chrono::milliseconds;

std::string WebdavConfig(const std::string& backend_keys) {
  return "backends:\n"                         // line 1
         "  share:\n"                          // line 2
         "    kind: webdav\n"                  // line 3
         "    url: http://127.0.0.1:8080\n" +  // line 4
         backend_keys +                        // line 5...
         "routes:\n"
         "  - name: share\n"
         "    prefix: /dav/\n"
         "    backend: share\n"
         "    fence_key: \"share:{path}\"\n";
}

TEST(WebdavConfigTest, WebdavBackendFillsThePassthroughAndTheLockOptions) {
  Config config;
  const auto errors = LoadConfigText(WebdavConfig("    response_timeout: 7s\n"
                                                  "    lock_timeout: 3s\n"
                                                  "    lock_attempts: 9\n"
                                                  "    lock_retry_delay: 25ms\n"),
                                     "test.yaml", &config);
  for (const ConfigError& error : errors) ADD_FAILURE() << error.ToString();
  ASSERT_TRUE(errors.empty());
  const BackendConfig& share = config.backends.at("share");
  EXPECT_EQ(share.kind, "webdav");
  EXPECT_EQ(share.http.port, 8080);  // the passthrough
  EXPECT_EQ(share.webdav.host, "127.0.0.1");
  EXPECT_EQ(share.webdav.port, 8080);
  EXPECT_EQ(share.webdav.response_timeout, milliseconds(7000));
  EXPECT_EQ(share.webdav.lock_timeout, milliseconds(3000));
  EXPECT_EQ(share.webdav.lock_attempts, 9u);
  EXPECT_EQ(share.webdav.lock_retry_delay, milliseconds(25));
}

TEST(WebdavConfigTest, BadLockKeysAreNamedWithFileAndLine) {
  Config config;
  const auto errors = LoadConfigText(WebdavConfig("    lock_attempts: 0\n    lock_timeot: 3s\n"),
                                     "test.yaml", &config);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].file, "test.yaml");
  std::vector<std::string> keys = {errors[0].key, errors[1].key};
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys[0], "backends.share.lock_attempts");
  EXPECT_EQ(keys[1], "backends.share.lock_timeot");
  for (const ConfigError& error : errors) EXPECT_GE(error.line, 5) << error.ToString();
}

}  // namespace
}  // namespace fencegate::gateway
