// Config that works from anywhere: relative paths against the file's directory, environment
// variables in values, and the full reference showing every key the schema has.

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "gateway/config/config_loader.h"
#include "gateway/config/environment_expansion.h"

namespace fencegate::gateway {
namespace {

namespace fs = std::filesystem;
using config_reading::EnvironmentLookup;
using config_reading::ExpandEnvironment;

EnvironmentLookup FakeEnvironment(std::map<std::string, std::string> variables) {
  return [variables](const std::string& name) -> std::optional<std::string> {
    const auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
}

std::string Expanded(const std::string& text, const EnvironmentLookup& lookup) {
  std::string out, error;
  EXPECT_TRUE(ExpandEnvironment(text, lookup, &out, &error)) << text << ": " << error;
  return out;
}

std::string ExpansionError(const std::string& text, const EnvironmentLookup& lookup) {
  std::string out, error;
  EXPECT_FALSE(ExpandEnvironment(text, lookup, &out, &error)) << text << " -> " << out;
  return error;
}

TEST(EnvironmentExpansionTest, BracedBareDefaultsAndEscapes) {
  const EnvironmentLookup env = FakeEnvironment({{"HOME", "/home/op"}, {"EMPTY", ""}});
  EXPECT_EQ(Expanded("${HOME}/var", env), "/home/op/var");
  EXPECT_EQ(Expanded("$HOME/var", env), "/home/op/var");
  EXPECT_EQ(Expanded("${UNSET:-/srv/data}/x", env), "/srv/data/x");
  EXPECT_EQ(Expanded("${HOME:-/srv}", env), "/home/op");
  EXPECT_EQ(Expanded("${EMPTY:-fallback}", env), "fallback");  // as the shell's :-
  EXPECT_EQ(Expanded("${UNSET:-}", env), "");
  EXPECT_EQ(Expanded("cost $$5", env), "cost $5");
  EXPECT_EQ(Expanded("$$HOME", env), "$HOME");
  EXPECT_EQ(Expanded("no variables", env), "no variables");
  EXPECT_EQ(Expanded("$HOME_DIR", FakeEnvironment({{"HOME_DIR", "a"}, {"HOME", "b"}})), "a");
}

TEST(EnvironmentExpansionTest, UnsetAndMalformedAreErrors) {
  const EnvironmentLookup env = FakeEnvironment({});
  EXPECT_NE(ExpansionError("${UNSET}/x", env).find("UNSET is not set"), std::string::npos);
  EXPECT_NE(ExpansionError("$UNSET", env).find("UNSET is not set"), std::string::npos);
  EXPECT_NE(ExpansionError("${OPEN", env).find("closing"), std::string::npos);
  EXPECT_NE(ExpansionError("${1X}", env).find("not a variable"), std::string::npos);
  EXPECT_NE(ExpansionError("50$", env).find("$$"), std::string::npos);
  EXPECT_NE(ExpansionError("a $ b", env).find("$$"), std::string::npos);
}

// A directory with a config file in a subdirectory, loaded from a different working directory.
class ConfigPathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("config_paths_" +
             std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "etc");
    std::ofstream(root_ / "etc" / "cert.pem") << "x\n";
    std::ofstream(root_ / "etc" / "api-keys") << "ops " << std::string(64, 'a') << "\n";
    std::ofstream(root_ / "etc" / "secret") << std::string(40, 'k') << "\n";
  }

  std::vector<ConfigError> LoadFile(const std::string& text, Config* config) {
    const fs::path file = root_ / "etc" / "fencegate.yaml";
    std::ofstream(file) << text;
    return LoadConfigFile(file.string(), config);
  }

  fs::path root_;
};

TEST_F(ConfigPathsTest, RelativePathsResolveAgainstTheFilesDirectory) {
  Config config;
  const std::vector<ConfigError> errors = LoadFile(
      "data_dir: ../state\n"
      "store: {path: db/fences}\n"
      "access_log: {path: ../log/access.log}\n"
      "auth: {api_keys_file: api-keys}\n"
      "locks:\n"
      "  signing: {key_id: k1, keys: [{id: k1, secret_file: secret}]}\n"
      "backends:\n"
      "  files: {kind: filesystem, root: \"{data_dir}/files\"}\n"
      "  other: {kind: filesystem, root: served}\n"
      "routes:\n"
      "  - {name: files, prefix: /files/, backend: files, fence_key: \"files:{path}\"}\n"
      "  - {name: other, prefix: /other/, backend: other, fence_key: \"other:{path}\"}\n",
      &config);
  for (const ConfigError& error : errors) ADD_FAILURE() << error.ToString();
  const fs::path etc = root_ / "etc";
  EXPECT_EQ(config.config_dir, etc.string());
  EXPECT_EQ(config.data_dir, (root_ / "state").string());
  EXPECT_EQ(config.data_dir_as_written, "../state");
  EXPECT_EQ(config.store.path, (etc / "db" / "fences").string());
  EXPECT_EQ(config.access_log.path, (root_ / "log" / "access.log").string());
  EXPECT_EQ(config.auth.api_keys_file, (etc / "api-keys").string());
  EXPECT_EQ(config.backends.at("files").filesystem.root, (root_ / "state" / "files").string());
  EXPECT_EQ(config.backends.at("other").filesystem.root, (etc / "served").string());
  ASSERT_FALSE(config.locks.signing.empty());  // read from etc/secret, not ./secret
}

TEST_F(ConfigPathsTest, StdoutAccessLogAndAbsolutePathsStayAsWritten) {
  Config config;
  const std::vector<ConfigError> errors = LoadFile(
      "data_dir: /var/lib/fencegate\naccess_log: {path: \"-\"}\n"
      "backends: {files: {kind: filesystem, root: /srv/files}}\n"
      "routes: [{name: files, prefix: /files/, backend: files, fence_key: \"f:{path}\"}]\n",
      &config);
  for (const ConfigError& error : errors) ADD_FAILURE() << error.ToString();
  EXPECT_EQ(config.data_dir, "/var/lib/fencegate");
  EXPECT_EQ(config.access_log.path, "-");
  EXPECT_EQ(config.backends.at("files").filesystem.root, "/srv/files");
}

TEST_F(ConfigPathsTest, DefaultDataDirIsBesideTheFile) {
  Config config;
  const std::vector<ConfigError> errors = LoadFile(
      "backends: {files: {kind: filesystem, root: /srv/files}}\n"
      "routes: [{name: files, prefix: /files/, backend: files, fence_key: \"f:{path}\"}]\n",
      &config);
  for (const ConfigError& error : errors) ADD_FAILURE() << error.ToString();
  EXPECT_EQ(config.data_dir, (root_ / "etc" / "var").string());
}

TEST_F(ConfigPathsTest, EnvironmentVariablesExpandAndUnsetOnesAreLocatedErrors) {
  ::setenv("FENCEGATE_TEST_STATE", (root_ / "from-env").c_str(), 1);
  ::unsetenv("FENCEGATE_TEST_UNSET");
  Config config;
  std::vector<ConfigError> errors = LoadFile(
      "data_dir: ${FENCEGATE_TEST_STATE}\n"
      "backends: {files: {kind: filesystem, root: \"${FENCEGATE_TEST_UNSET:-/srv}/f\"}}\n"
      "routes: [{name: files, prefix: /files/, backend: files, fence_key: \"f:{path}\"}]\n",
      &config);
  for (const ConfigError& error : errors) ADD_FAILURE() << error.ToString();
  EXPECT_EQ(config.data_dir, (root_ / "from-env").string());
  EXPECT_EQ(config.backends.at("files").filesystem.root, "/srv/f");

  errors = LoadFile(
      "backends: {files: {kind: filesystem, root: /srv/files}}\n"
      "data_dir: $FENCEGATE_TEST_UNSET/var\n"
      "routes: [{name: files, prefix: /files/, backend: files, fence_key: \"f:{path}\"}]\n",
      &config);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 2);
  EXPECT_EQ(errors[0].column, 11);
  EXPECT_NE(errors[0].message.find("FENCEGATE_TEST_UNSET is not set"), std::string::npos)
      << errors[0].ToString();
  ::unsetenv("FENCEGATE_TEST_STATE");
}

// "routes[2].policy" -> "routes[].policy": the schema's path of a key, whatever its index.
std::string SchemaPath(const std::string& key) {
  return std::regex_replace(key, std::regex(R"(\[[0-9]+\])"), "[]");
}

// KEY, KEY_file and KEY_env are one setting given three ways (exactly one of them).
std::string AlternativeGroup(const std::string& key) {
  for (const char* suffix : {"_file", "_env"}) {
    if (key.ends_with(suffix)) return key.substr(0, key.size() - std::string(suffix).size());
  }
  return key;
}

// The text with its commented examples ("  # key: value", "  #   nested: value") uncommented, so
// that keys the example can only show (they need real certificates, or store kind etcd) are
// walked at their place in the schema too, not merely found somewhere in a comment.
std::string WithCommentedKeys(const std::string& text) {
  static const std::regex commented_key(R"(^([ \t]*)# ?([ \t]*(- )?[a-z_][a-z0-9_]*:( .*)?)$)");
  std::istringstream lines(text);
  std::string out, line;
  while (std::getline(lines, line)) out += std::regex_replace(line, commented_key, "$1$2") + "\n";
  return out;
}

// Every key the loader accepts is in config/examples/full-reference.yaml, at its place in the
// schema: set in some mapping there, given another way (KEY_file for KEY), or shown on a
// commented line where the example cannot set it. The loader walks the schema twice: over the
// file as it is and over the file with its commented keys uncommented (whose other errors, a
// missing certificate or etcd beside rocksdb, do not matter here).
TEST(FullReferenceTest, ShowsEveryKeyOfTheSchema) {
  const fs::path file = fs::path(FENCEGATE_SOURCE_DIR) / "config/examples/full-reference.yaml";
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  Config config;
  std::vector<SchemaKey> walked;
  const std::vector<ConfigError> errors =
      LoadConfigText(text.str(), file.string(), &config, &walked);
  for (const ConfigError& error : errors) ADD_FAILURE() << error.ToString();

  const std::string uncommented = WithCommentedKeys(text.str());
  ASSERT_NO_THROW(YAML::Load(uncommented))
      << "full-reference.yaml's commented keys, uncommented, are not YAML: keep them at the "
         "indentation they would have";
  Config scratch;
  std::vector<SchemaKey> walked_with_comments;
  LoadConfigText(uncommented, file.string(), &scratch, &walked_with_comments);
  walked.insert(walked.end(), walked_with_comments.begin(), walked_with_comments.end());

  std::set<std::string> shown, given;  // schema paths; alternative groups
  for (const SchemaKey& key : walked) {
    if (!key.present) continue;
    shown.insert(SchemaPath(key.key));
    given.insert(AlternativeGroup(SchemaPath(key.key)));
  }
  // The walk went into the nested sections (a route's policy, a backend's TLS keys, ...).
  EXPECT_GT(shown.size(), 100u);
  std::set<std::string> missing;
  for (const SchemaKey& key : walked) {
    const std::string path = SchemaPath(key.key);
    if (shown.count(path) == 0 && given.count(AlternativeGroup(path)) == 0) missing.insert(path);
  }
  for (const std::string& path : missing) {
    ADD_FAILURE() << path << " is a key of the config schema, but config/examples/"
                  << "full-reference.yaml neither sets it nor shows it, commented, at its place";
  }
}

}  // namespace
}  // namespace fencegate::gateway
