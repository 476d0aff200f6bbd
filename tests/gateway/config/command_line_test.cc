#include "gateway/config/command_line.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gateway/config/config_loader.h"

namespace fencegate::gateway {
namespace {

// True when `text` contains `part`; reported with both on failure.
::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

CommandLine Parse(const std::vector<std::string>& args) {
  CommandLine command_line;
  std::string error;
  EXPECT_TRUE(ParseCommandLine(args, &command_line, &error)) << error;
  return command_line;
}

std::string ParseError(const std::vector<std::string>& args) {
  CommandLine command_line;
  std::string error;
  EXPECT_FALSE(ParseCommandLine(args, &command_line, &error));
  return error;
}

TEST(CommandLineTest, DefaultsToRunWithTheDefaultConfig) {
  CommandLine command_line = Parse({"fencegate"});
  EXPECT_EQ(command_line.action, CommandLine::Action::kRun);
  EXPECT_EQ(command_line.config_path, DefaultConfigPath());
  EXPECT_TRUE(command_line.config_path.ends_with("etc/fencegate/fencegate.yaml"));
  EXPECT_FALSE(command_line.listen);
  EXPECT_FALSE(command_line.admin_listen);
  EXPECT_FALSE(command_line.data_dir);
}

TEST(CommandLineTest, OptionsTakeSeparateOrInlineValues) {
  CommandLine separate = Parse({"fencegate", "--config", "a.yaml", "--listen", "127.0.0.1:0",
                                "--admin-listen", "[::1]:9901", "--data-dir", "/tmp/x"});
  CommandLine inline_values = Parse({"fencegate", "--config=a.yaml", "--listen=127.0.0.1:0",
                                     "--admin-listen=[::1]:9901", "--data-dir=/tmp/x"});
  for (const CommandLine& command_line : {separate, inline_values}) {
    EXPECT_EQ(command_line.action, CommandLine::Action::kRun);
    EXPECT_EQ(command_line.config_path, "a.yaml");
    ASSERT_TRUE(command_line.listen);
    EXPECT_EQ(command_line.listen->host, "127.0.0.1");
    EXPECT_EQ(command_line.listen->port, 0);
    ASSERT_TRUE(command_line.admin_listen);
    EXPECT_EQ(command_line.admin_listen->host, "::1");
    EXPECT_EQ(command_line.admin_listen->port, 9901);
    EXPECT_EQ(command_line.data_dir, "/tmp/x");
  }
}

TEST(CommandLineTest, AcceptsArgsWithoutTheProgramName) {
  CommandLine command_line = Parse({"--version"});
  EXPECT_EQ(command_line.action, CommandLine::Action::kVersion);
}

TEST(CommandLineTest, Actions) {
  EXPECT_EQ(Parse({"fencegate", "--version"}).action, CommandLine::Action::kVersion);
  EXPECT_EQ(Parse({"fencegate", "--help"}).action, CommandLine::Action::kHelp);
  EXPECT_EQ(Parse({"fencegate", "-h"}).action, CommandLine::Action::kHelp);
  CommandLine check = Parse({"fencegate", "--check-config", "b.yaml"});
  EXPECT_EQ(check.action, CommandLine::Action::kCheckConfig);
  EXPECT_EQ(check.config_path, "b.yaml");
  CommandLine check_inline = Parse({"fencegate", "--check-config=c.yaml"});
  EXPECT_EQ(check_inline.action, CommandLine::Action::kCheckConfig);
  EXPECT_EQ(check_inline.config_path, "c.yaml");
}

TEST(CommandLineTest, Errors) {
  EXPECT_TRUE(Contains(ParseError({"fencegate", "--bogus"}), "unknown option '--bogus'"));
  EXPECT_TRUE(Contains(ParseError({"fencegate", "extra"}), "unknown option 'extra'"));
  EXPECT_TRUE(Contains(ParseError({"fencegate", "--config"}), "--config needs a value"));
  EXPECT_TRUE(Contains(ParseError({"fencegate", "--data-dir="}), "non-empty"));
  EXPECT_TRUE(Contains(ParseError({"fencegate", "--version=2"}), "takes no value"));
  EXPECT_TRUE(Contains(ParseError({"fencegate", "--listen", "127.0.0.1"}), "--listen"));
  EXPECT_TRUE(Contains(ParseError({"fencegate", "--config", "a", "--config", "b"}), "twice"));
  EXPECT_TRUE(
      Contains(ParseError({"fencegate", "--config", "a", "--check-config", "b"}), "give one"));
}

TEST(CommandLineTest, ListenAddresses) {
  ListenAddress address;
  std::string error;
  ASSERT_TRUE(ParseListenAddress("0.0.0.0:8080", &address, &error)) << error;
  EXPECT_EQ(address.host, "0.0.0.0");
  EXPECT_EQ(address.port, 8080);
  ASSERT_TRUE(ParseListenAddress("localhost:65535", &address, &error)) << error;
  EXPECT_EQ(address.host, "localhost");
  EXPECT_EQ(address.port, 65535);
  ASSERT_TRUE(ParseListenAddress("[2001:db8::1]:0", &address, &error)) << error;
  EXPECT_EQ(address.host, "2001:db8::1");
  EXPECT_EQ(address.port, 0);

  for (const char* bad : {"127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:8x", "::1:80",
                          "[::1]80", "[nothex]:80", "example.com:80", ":80", "256.1.1.1:80"}) {
    EXPECT_FALSE(ParseListenAddress(bad, &address, &error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

TEST(CommandLineTest, OverridesReplaceListenersAndDataDir) {
  Config config;
  std::vector<ConfigError> errors = LoadConfigText(
      "data_dir: ./var\n"
      "backends:\n"
      "  files: {kind: filesystem, root: \"{data_dir}/files\"}\n"
      "  fixed: {kind: filesystem, root: /srv/fixed}\n"
      "routes:\n"
      "  - {name: a, prefix: /, backend: files, fence_key: \"k\"}\n",
      "t.yaml", &config);
  ASSERT_TRUE(errors.empty());
  // Relative to the file's directory (t.yaml: the working directory's).
  ASSERT_EQ(config.backends.at("files").filesystem.root, ConfigDirectory("t.yaml") + "/var/files");

  CommandLine command_line = Parse({"fencegate", "--listen", "127.0.0.1:0", "--admin-listen",
                                    "127.0.0.1:1", "--data-dir", "/run/fg"});
  ApplyOverrides(command_line, &config);
  EXPECT_EQ(config.listen.port, 0);
  EXPECT_EQ(config.admin_listen.port, 1);
  EXPECT_EQ(config.data_dir, "/run/fg");
  EXPECT_EQ(config.store.path, "");  // still "<data_dir>/fences", now under /run/fg
  EXPECT_EQ(config.backends.at("files").filesystem.root, "/run/fg/files");
  EXPECT_EQ(config.backends.at("fixed").filesystem.root, "/srv/fixed");
}

TEST(CommandLineTest, NoOverridesLeaveTheConfigAlone) {
  Config config;
  config.listen = {"10.0.0.1", 80};
  config.data_dir = "/keep";
  ApplyOverrides(Parse({"fencegate"}), &config);
  EXPECT_EQ(config.listen.host, "10.0.0.1");
  EXPECT_EQ(config.listen.port, 80);
  EXPECT_EQ(config.data_dir, "/keep");
}

TEST(CommandLineTest, UsageMentionsEveryOption) {
  std::string usage = UsageText();
  for (const char* option : {"--config", "--check-config", "--listen", "--admin-listen",
                             "--data-dir", "--version", "--help"}) {
    EXPECT_TRUE(Contains(usage, option));
  }
}

}  // namespace
}  // namespace fencegate::gateway
