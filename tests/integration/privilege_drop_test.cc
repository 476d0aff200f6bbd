// `user:` (docs/OPERATIONS.md "Running as another user"): started as root, the gateway binds,
// then serves as the user; the store and the files it writes are the user's. Needs root (CI runs
// as root); skipped otherwise.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/fencegate_run.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace fencegate::integration {
namespace {

std::string ConfigText(const std::string& user) {
  return "user: " + user +
         "\n"
         "access_log: {path: \"\"}\n"
         "backends:\n"
         "  files: {kind: filesystem, root: \"{data_dir}/files\"}\n"
         "routes:\n"
         "  - {name: files, prefix: /files/, backend: files, fence_key: \"files:{path}\"}\n";
}

// The four ids (real, effective, saved, filesystem) of a "Uid:" or "Gid:" line of
// /proc/PID/status.
std::string IdsLine(pid_t pid, const std::string& name) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(name + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(name.size() + 1));
    std::string ids, id;
    while (fields >> id) ids += (ids.empty() ? "" : " ") + id;
    return ids;
  }
  return "";
}

class PrivilegeDropTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (CI runs as root)";
    const passwd* nobody = ::getpwnam("nobody");
    ASSERT_NE(nobody, nullptr);
    uid_ = nobody->pw_uid;
    gid_ = nobody->pw_gid;
    // nobody must reach its data dir through the test's private temporary directory.
    std::filesystem::permissions(dir_.path(), std::filesystem::perms::owner_all |
                                                  std::filesystem::perms::group_exec |
                                                  std::filesystem::perms::others_exec);
    data_dir_ = dir_.Join("data");
    std::filesystem::create_directory(data_dir_);
    config_ = dir_.WriteFile("fencegate.yaml", ConfigText("nobody"));
  }

  TempDir dir_;
  std::string data_dir_;
  std::string config_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
};

TEST_F(PrivilegeDropTest, RootServesAsTheUserAndItsFencedWritesWork) {
  ASSERT_EQ(::chown(data_dir_.c_str(), uid_, gid_), 0);
  std::string error;
  std::unique_ptr<GatewayInstance> gateway = GatewayInstance::Start(config_, data_dir_, &error);
  ASSERT_NE(gateway, nullptr) << error;

  const pid_t pid = gateway->process().pid();
  const std::string uid = std::to_string(uid_);
  const std::string gid = std::to_string(gid_);
  EXPECT_EQ(IdsLine(pid, "Uid"), uid + " " + uid + " " + uid + " " + uid);
  EXPECT_EQ(IdsLine(pid, "Gid"), gid + " " + gid + " " + gid + " " + gid);
  EXPECT_EQ(IdsLine(pid, "CapEff"), "0000000000000000");

  std::optional<Response> written = Fetch(
      gateway->traffic_port(),
      MakeRequest(http::verb::put, "/files/a.txt", {{"Fencing-Token", "5"}}, "fresh"), &error);
  ASSERT_TRUE(written.has_value()) << error;
  EXPECT_TRUE(written->result_int() == 201 || written->result_int() == 204)
      << written->result_int() << " " << written->body() << gateway->process().Stderr();
  std::optional<Response> stale = Fetch(
      gateway->traffic_port(),
      MakeRequest(http::verb::put, "/files/a.txt", {{"Fencing-Token", "4"}}, "stale"), &error);
  ASSERT_TRUE(stale.has_value()) << error;
  EXPECT_EQ(stale->result_int(), 409);

  // What the gateway created is the user's, so it can write it again after a restart.
  for (const std::string& path : {data_dir_ + "/files/a.txt", data_dir_ + "/fences/CURRENT",
                                  data_dir_ + "/fences.identity"}) {
    struct stat info {};
    ASSERT_EQ(::stat(path.c_str(), &info), 0) << path;
    EXPECT_EQ(info.st_uid, uid_) << path;
  }
  EXPECT_EQ(ReadWholeFile(data_dir_ + "/files/a.txt"), "fresh");
}

// A port below 1024 is bound while the process is root, and served once it is the user.
TEST_F(PrivilegeDropTest, APortBelow1024IsBoundAsRootAndServedAsTheUser) {
  ASSERT_EQ(::chown(data_dir_.c_str(), uid_, gid_), 0);
  // A privileged port free now: the gateway binds it right after, with SO_REUSEADDR.
  std::uint16_t port = 0;
  for (std::uint16_t candidate = 990; candidate > 900 && port == 0; --candidate) {
    const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(candidate);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(probe, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0) {
      port = candidate;
    }
    ::close(probe);
  }
  ASSERT_NE(port, 0) << "no free port in 901..990";
  std::string error;
  std::unique_ptr<Process> process =
      Process::Start({FencegateBinary(), "--config", config_, "--data-dir", data_dir_, "--listen",
                      "127.0.0.1:" + std::to_string(port), "--admin-listen", "127.0.0.1:0"},
                     &error);
  ASSERT_NE(process, nullptr) << error;
  std::uint16_t traffic = 0, admin = 0;
  ASSERT_TRUE(process->WaitForStdoutLine(
      [&](const std::string& line) { return ParseListeningLine(line, &traffic, &admin); },
      std::chrono::seconds(15)))
      << process->Stderr();
  EXPECT_EQ(traffic, port);
  EXPECT_EQ(IdsLine(process->pid(), "Uid").substr(0, std::to_string(uid_).size() + 1),
            std::to_string(uid_) + " ");
  std::optional<Response> written = Fetch(
      port, MakeRequest(http::verb::put, "/files/low.txt", {{"Fencing-Token", "1"}}, "x"), &error);
  ASSERT_TRUE(written.has_value()) << error;
  EXPECT_TRUE(written->result_int() == 201 || written->result_int() == 204)
      << written->result_int();
  EXPECT_EQ(process->Stop(std::chrono::seconds(20)), 0) << process->Stderr();
}

// Opened as the user, a data dir the user cannot write fails the start, rather than the first
// write after the drop.
TEST_F(PrivilegeDropTest, ADataDirTheUserCannotWriteRefusesTheStart) {
  ::chmod(data_dir_.c_str(), 0755);  // root's, not the user's
  const Finished finished = RunFencegate({"--config", config_, "--data-dir", data_dir_, "--listen",
                                          "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"});
  EXPECT_EQ(finished.status, 3) << finished.stderr_text;
  EXPECT_NE(finished.stderr_text.find("start-up failed"), std::string::npos)
      << finished.stderr_text;
  EXPECT_NE(finished.stderr_text.find("ermission denied"), std::string::npos)
      << finished.stderr_text;
}

TEST_F(PrivilegeDropTest, AnUnknownUserIsAConfigErrorAndRefusesTheStart) {
  const std::string config = dir_.WriteFile("unknown.yaml", ConfigText("no-such-user-fg"));
  const Finished checked = RunFencegate({"--check-config", config});
  EXPECT_EQ(checked.status, 1) << checked.stderr_text;
  EXPECT_NE(checked.stderr_text.find("user 'no-such-user-fg'"), std::string::npos)
      << checked.stderr_text;
  const Finished started = RunFencegate({"--config", config, "--data-dir", data_dir_, "--listen",
                                         "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"});
  EXPECT_EQ(started.status, 3) << started.stderr_text;
  EXPECT_NE(started.stderr_text.find("user 'no-such-user-fg'"), std::string::npos)
      << started.stderr_text;
}

}  // namespace
}  // namespace fencegate::integration
