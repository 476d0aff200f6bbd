// A config file works from any working directory (relative paths are the file's), a store left
// where a working-directory-relative path used to put it stops the start, --check-config checks
// what start-up would load, and a route's changed fence keys are refused at start-up
// (gateway/server/route_bindings.h).

#include <filesystem>
#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/fencegate_run.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_certs.h"

namespace fencegate::integration {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string FilesRouteConfig(const std::string& data_dir, const std::string& fence_key) {
  return "data_dir: " + data_dir +
         "\n"
         "backends:\n"
         "  files: {kind: filesystem, root: \"{data_dir}/files\"}\n"
         "routes:\n"
         "  - {name: files, prefix: /files/, backend: files, fence_key: \"" +
         fence_key + "\"}\n";
}

// `fencegate ARGS` run in `cwd` (env -C), to its end.
Finished RunIn(const std::string& cwd, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"-C", cwd, FencegateBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string error;
  std::vector<std::string> command = {"/usr/bin/env"};
  command.insert(command.end(), argv.begin(), argv.end());
  std::unique_ptr<Process> process = Process::Start(command, &error);
  Finished finished;
  if (!process) {
    ADD_FAILURE() << error;
    return finished;
  }
  finished.status = process->Wait(std::chrono::seconds(30)).value_or(-1);
  EXPECT_TRUE(process->WaitForOutputEnd(std::chrono::seconds(30)));
  for (const std::string& line : process->StdoutLines()) finished.stdout_text += line + "\n";
  finished.stderr_text = process->Stderr();
  return finished;
}

int PutWithToken(std::uint16_t port, const std::string& path, const std::string& token) {
  std::string error;
  std::optional<Response> response =
      Fetch(port, MakeRequest(http::verb::put, path, {{"Fencing-Token", token}}, "body"), &error);
  EXPECT_TRUE(response.has_value()) << error;
  return response ? response->result_int() : 0;
}

// The file's data_dir "../state" is <dir>/state whether the gateway runs in / or elsewhere.
TEST(ConfigAnywhereTest, RelativePathsAreTheConfigFilesWhateverTheWorkingDirectory) {
  TempDir dir;
  fs::create_directories(dir.Join("etc"));
  const std::string config =
      dir.WriteFile("etc/fencegate.yaml", FilesRouteConfig("../state", "f:{path}"));
  // Started from / (no --data-dir: the file's own data_dir decides).
  std::string error;
  auto process = Process::Start({"/usr/bin/env", "-C", "/", FencegateBinary(), "--config", config,
                                 "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"},
                                &error);
  ASSERT_NE(process, nullptr) << error;
  std::uint16_t traffic = 0, admin = 0;
  ASSERT_TRUE(process->WaitForStdoutLine(
      [&](const std::string& line) { return ParseListeningLine(line, &traffic, &admin); },
      std::chrono::seconds(15)))
      << process->Stderr();
  const int status = PutWithToken(traffic, "/files/notes.txt", "3");
  EXPECT_TRUE(status == 201 || status == 204) << status;
  EXPECT_TRUE(fs::exists(dir.Join("state/files/notes.txt")));
  EXPECT_TRUE(fs::exists(dir.Join("state/fences")));
  EXPECT_FALSE(fs::exists("/state"));
}

// A store made where "var" meant <working dir>/var, and a config file elsewhere that says "var":
// the start refuses instead of creating a new, empty store beside the file.
TEST(ConfigAnywhereTest, StoreLeftAtTheWorkingDirectoryPlaceStopsTheStart) {
  TempDir dir;
  fs::create_directories(dir.Join("conf"));
  const std::string config =
      dir.WriteFile("conf/fencegate.yaml", FilesRouteConfig("var", "f:{path}"));
  // The store the old reading of "var" made, run in <dir>: <dir>/var/fences.
  Finished init =
      RunFencegate({"store", "init", "--config", config, "--data-dir", dir.Join("var")});
  ASSERT_EQ(init.status, 0) << init.stderr_text;
  ASSERT_TRUE(fs::exists(dir.Join("var/fences")));

  Finished started = RunIn(
      dir.path(), {"--config", config, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"});
  EXPECT_EQ(started.status, 3) << started.stderr_text;
  EXPECT_THAT(started.stderr_text, HasSubstr("no fence store at " + dir.Join("conf/var/fences")));
  EXPECT_THAT(started.stderr_text, HasSubstr("but one at " + dir.Join("var/fences")));
  EXPECT_FALSE(fs::exists(dir.Join("conf/var/fences")));

  Finished checked = RunIn(dir.path(), {"--check-config", config});
  EXPECT_EQ(checked.status, 1) << checked.stdout_text;
  EXPECT_THAT(checked.stderr_text, HasSubstr("but one at " + dir.Join("var/fences")));
}

TEST(ConfigAnywhereTest, EnvironmentVariablesInTheFile) {
  TempDir dir;
  const std::string config = dir.WriteFile(
      "fencegate.yaml", FilesRouteConfig("${FENCEGATE_TEST_UNSET_VARIABLE}/var", "f:{path}"));
  Finished checked = RunFencegate({"--check-config", config});
  EXPECT_EQ(checked.status, 1);
  EXPECT_THAT(checked.stderr_text,
              HasSubstr(config + ":1:11: the environment variable FENCEGATE_TEST_UNSET_VARIABLE "
                                 "is not set"));
}

// --check-config loads the certificates as start-up would: a key that is not the
// certificate's is an error naming the listener, though both files are readable.
TEST(ConfigAnywhereTest, CheckConfigLoadsCertificatesAsStartWould) {
  TempDir dir;
  std::string error;
  ASSERT_TRUE(MakeTestCerts(dir.path(), &error)) << error;
  const std::string base = FilesRouteConfig(dir.Join("var"), "f:{path}");
  const std::string good = dir.WriteFile(
      "good.yaml", base + "tls:\n  traffic: {cert_file: server.pem, key_file: server.key}\n");
  Finished checked = RunFencegate({"--check-config", good});
  EXPECT_EQ(checked.status, 0) << checked.stderr_text;

  const std::string mismatched = dir.WriteFile(
      "mismatched.yaml", base + "tls:\n  traffic: {cert_file: server.pem, key_file: client.key}\n");
  checked = RunFencegate({"--check-config", mismatched});
  EXPECT_EQ(checked.status, 1);
  EXPECT_THAT(checked.stderr_text, HasSubstr(mismatched + ": tls.traffic: "));

  dir.WriteFile("garbage.pem", "not a certificate\n");
  const std::string not_a_cert =
      dir.WriteFile("not_a_cert.yaml",
                    base + "tls:\n  traffic: {cert_file: garbage.pem, key_file: server.key}\n");
  checked = RunFencegate({"--check-config", not_a_cert});
  EXPECT_EQ(checked.status, 1);
  EXPECT_THAT(checked.stderr_text, HasSubstr(not_a_cert + ": tls.traffic: "));
}

// A route whose fence keys changed while the store holds its fences: the restart is refused,
// naming the route, until the operator accepts the change for it.
TEST(ConfigAnywhereTest, ChangedFenceKeyTemplateIsRefusedAtRestartUnlessAccepted) {
  TempDir dir;
  const std::string data = dir.Join("data");
  const std::string before = dir.WriteFile("before.yaml", FilesRouteConfig(data, "files:{path}"));
  const std::string after = dir.WriteFile("after.yaml", FilesRouteConfig(data, "docs:{path}"));
  std::string error;
  {
    auto gateway = GatewayInstance::Start(before, data, &error);
    ASSERT_NE(gateway, nullptr) << error;
    const int status = PutWithToken(gateway->traffic_port(), "/files/a.txt", "10");
    ASSERT_TRUE(status == 201 || status == 204) << status;
  }
  Finished refused = RunFencegate({"--config", after, "--listen", "127.0.0.1:0", "--admin-listen",
                                   "127.0.0.1:0", "--data-dir", data});
  EXPECT_EQ(refused.status, 3);
  EXPECT_THAT(refused.stderr_text,
              HasSubstr("route \"files\" changed from fence_key \"files:{path}\""));
  EXPECT_THAT(refused.stderr_text, HasSubstr("--accept-fence-key-change"));

  // The old template still starts, and still refuses the stale token.
  {
    auto gateway = GatewayInstance::Start(before, data, &error);
    ASSERT_NE(gateway, nullptr) << error;
    EXPECT_EQ(PutWithToken(gateway->traffic_port(), "/files/a.txt", "9"), 409);
  }
  {
    auto accepted = GatewayInstance::Start(after, data, &error, std::chrono::seconds(15),
                                           {"--accept-fence-key-change", "files"});
    ASSERT_NE(accepted, nullptr) << error;
    const int status = PutWithToken(accepted->traffic_port(), "/files/b.txt", "1");
    EXPECT_TRUE(status == 201 || status == 204) << status;
  }
  // Accepted once, recorded: the new binding is the known one from then on.
  auto restarted = GatewayInstance::Start(after, data, &error);
  ASSERT_NE(restarted, nullptr) << error;
}

}  // namespace
}  // namespace fencegate::integration
