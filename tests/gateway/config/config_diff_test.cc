// DiffConfigs: what a reload changes (README "Reloading").
#include "gateway/config/config_diff.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gateway/config/config_loader.h"

namespace fencegate::gateway {
namespace {

using Names = std::vector<std::string>;

const std::string kBase =
    "backends:\n"
    "  files:\n"
    "    kind: filesystem\n"
    "    root: /srv/files\n"
    "  api:\n"
    "    kind: http\n"
    "    url: http://127.0.0.1:9000\n"
    "routes:\n"
    "  - name: files\n"
    "    prefix: /files/\n"
    "    backend: files\n"
    "    fence_key: \"files:{path}\"\n"
    "  - name: api\n"
    "    prefix: /api/\n"
    "    backend: api\n"
    "    fence_key: \"api:{path}\"\n";

Config LoadForDiff(const std::string& text) {
  Config config;
  const auto errors = LoadConfigText(text, "test.yaml", &config);
  EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors.front().ToString());
  return config;
}

ConfigDiff Diff(const std::string& before, const std::string& after) {
  return DiffConfigs(LoadForDiff(before), before, LoadForDiff(after), after);
}

TEST(ConfigDiffTest, TheSameFileChangesNothing) {
  const ConfigDiff diff = Diff(kBase, kBase);
  EXPECT_TRUE(diff.routes.empty());
  EXPECT_TRUE(diff.backends.empty());
  EXPECT_TRUE(diff.restart_required.empty());
}

TEST(ConfigDiffTest, FormattingAndKeyOrderAreNoChange) {
  const std::string respelled =
      "routes:\n"
      "  - {name: files, backend: files, prefix: /files/, fence_key: \"files:{path}\"}\n"
      "  - {name: api, prefix: /api/, backend: api, fence_key: \"api:{path}\"}\n"
      "backends:\n"
      "  api: {url: \"http://127.0.0.1:9000\", kind: http}\n"
      "  files: {root: /srv/files, kind: filesystem}\n";
  const ConfigDiff diff = Diff(kBase, respelled);
  EXPECT_TRUE(diff.routes.empty());
  EXPECT_TRUE(diff.backends.empty());
}

TEST(ConfigDiffTest, RoutesAddedRemovedAndChangedByName) {
  std::string after = kBase;
  after.replace(after.find("prefix: /api/"), 13, "prefix: /v2/");
  after.replace(after.find("  - name: files\n"), 16, "  - name: documents\n");
  const ConfigDiff diff = Diff(kBase, after);
  EXPECT_EQ(diff.routes.added, Names{"documents"});
  EXPECT_EQ(diff.routes.removed, Names{"files"});
  EXPECT_EQ(diff.routes.changed, Names{"api"});
  EXPECT_TRUE(diff.backends.empty());
}

TEST(ConfigDiffTest, BackendsAddedRemovedAndChangedByName) {
  std::string after = kBase;
  after.replace(after.find("127.0.0.1:9000"), 14, "127.0.0.1:9001");
  after += "  - name: more\n    prefix: /more/\n    backend: more\n    fence_key: \"m:{path}\"\n";
  after.insert(after.find("routes:\n"),
               "  more:\n    kind: http\n    url: http://127.0.0.1:9002\n");
  const ConfigDiff diff = Diff(kBase, after);
  EXPECT_EQ(diff.backends.added, Names{"more"});
  EXPECT_EQ(diff.backends.changed, Names{"api"});
  EXPECT_TRUE(diff.backends.removed.empty());
  EXPECT_EQ(diff.routes.added, Names{"more"});
}

TEST(ConfigDiffTest, WhatOnlyAStartAppliesIsReported) {
  const std::string after = kBase +
                            "listen: 127.0.0.1:8181\n"
                            "data_dir: /var/lib/elsewhere\n"
                            "threads: 3\n"
                            "locks:\n  enabled: false\n"
                            "limits:\n  relay_buffer_memory: 64MiB\n  max_connections: 10\n"
                            "timeouts:\n  idle: 5s\n";
  const ConfigDiff diff = Diff(kBase, after);
  EXPECT_EQ(diff.restart_required,
            (Names{"listen", "data_dir", "threads", "limits.relay_buffer_memory", "locks"}));
}

TEST(ConfigDiffTest, AnAccessLogMovesBetweenFilesLiveButNotOnOrOff) {
  const std::string file = kBase + "access_log:\n  path: /var/log/a.log\n";
  EXPECT_TRUE(Diff(file, kBase + "access_log:\n  path: /var/log/b.log\n").restart_required.empty());
  EXPECT_EQ(Diff(file, kBase + "access_log:\n  path: \"-\"\n").restart_required,
            Names{"access_log.path"});
  EXPECT_EQ(Diff(file, kBase + "access_log:\n  path: \"\"\n").restart_required,
            Names{"access_log.path"});
  EXPECT_EQ(Diff(file, file + "  error_lines_per_second: 3\n").restart_required,
            Names{"access_log.error_lines_per_second"});
}

TEST(ConfigDiffTest, RestartOnlyKeysKeepTheirRunningValuesTheRestApplies) {
  const Config running = LoadForDiff(kBase + "access_log:\n  path: /var/log/a.log\n");
  const std::string text = kBase +
                           "listen: 127.0.0.1:8181\n"
                           "threads: 3\n"
                           "locks:\n  prefix: /other-locks/\n"
                           "access_log:\n  path: \"-\"\n"
                           "timeouts:\n  idle: 5s\n";
  Config next = LoadForDiff(text);
  const ConfigDiff diff =
      DiffConfigs(running, kBase + "access_log:\n  path: /var/log/a.log\n", next, text);
  KeepRestartOnlyValues(running, diff, &next);
  EXPECT_EQ(next.listen.port, running.listen.port);
  EXPECT_EQ(next.threads, running.threads);
  EXPECT_EQ(next.locks.prefix, running.locks.prefix);
  EXPECT_EQ(next.access_log.path, "/var/log/a.log");
  EXPECT_EQ(next.timeouts.idle, std::chrono::seconds(5));  // applies live
}

TEST(ConfigDiffTest, AppliedOverridesCountNotTheFile) {
  // --listen given on the command line: the file's listen changing makes no difference.
  Config before = LoadForDiff(kBase);
  Config after = LoadForDiff(kBase + "listen: 127.0.0.1:8181\n");
  after.listen = before.listen;
  const ConfigDiff diff = DiffConfigs(before, kBase, after, kBase + "listen: 127.0.0.1:8181\n");
  EXPECT_TRUE(diff.restart_required.empty());
}

TEST(ConfigDiffTest, UnparsableTextCountsEveryEntryAsNew) {
  const Config config = LoadForDiff(kBase);
  const ConfigDiff diff = DiffConfigs(config, "routes: [unclosed", config, kBase);
  EXPECT_EQ(diff.routes.added, (Names{"api", "files"}));
  EXPECT_EQ(diff.backends.added, (Names{"api", "files"}));
}

}  // namespace
}  // namespace fencegate::gateway
