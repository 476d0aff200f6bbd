// `fencegate lock` as scripts and operators use it, through the real binary against a real
// gateway: `status` (text and --json, never an owner token), --json results and errors, and
// https:// with the test CA (tests/support/make_test_certs.sh): mutual TLS, a wrong CA or a
// wrong name refused with a clear error.

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/support/eventually.h"
#include "tests/support/lock_test_support.h"
#include "tests/support/process.h"
#include "tests/support/test_certs.h"

namespace fencegate::integration {
namespace {
namespace json = boost::json;

struct Outcome {
  int status = -1;
  std::vector<std::string> stdout_lines;
  std::string stderr_text;
};

// Runs `fencegate lock ARGS...` to completion.
Outcome LockCommand(std::vector<std::string> args) {
  args.insert(args.begin(), {FencegateBinary(), "lock"});
  std::string error;
  auto process = Process::Start(args, &error);
  if (process == nullptr) {
    ADD_FAILURE() << error;
    return {};
  }
  Outcome outcome;
  outcome.status = process->Wait(std::chrono::seconds(60)).value_or(-1);
  process->WaitForOutputEnd(std::chrono::seconds(10));
  outcome.stdout_lines = process->StdoutLines();
  outcome.stderr_text = process->Stderr();
  return outcome;
}

// The single JSON object a --json run printed.
json::object JsonOutput(const Outcome& outcome) {
  if (outcome.stdout_lines.size() != 1) {
    ADD_FAILURE() << "expected one line of JSON, stderr: " << outcome.stderr_text;
    return {};
  }
  boost::system::error_code ec;
  json::value value = json::parse(outcome.stdout_lines[0], ec);
  if (ec || !value.is_object()) {
    ADD_FAILURE() << "not a JSON object: " << outcome.stdout_lines[0];
    return {};
  }
  return value.as_object();
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

class LockCommandTest : public LockGatewayTest {
 protected:
  std::string Url() const {
    return "http://127.0.0.1:" + std::to_string(gateway_->traffic_port()) + "/locks/";
  }
};

TEST_F(LockCommandTest, StatusShowsHolderTokenTtlAndWaitersButNoOwnerToken) {
  const Outcome free = LockCommand({"status", "jobs-1", "--url", Url()});
  ASSERT_EQ(free.status, 0) << free.stderr_text;
  EXPECT_EQ(Joined(free.stdout_lines),
            "lock:       jobs-1\nheld:       no\nwaiters:    0\nlast token: 0\n");

  const Response grant = Acquire("jobs-1", 30000);
  ASSERT_EQ(grant.result_int(), 200) << grant.body();
  const std::string owner = OwnerTokenOf(grant);
  // A second client waits for the lock in the background.
  std::string error;
  auto waiter = Process::Start(
      {FencegateBinary(), "lock", "acquire", "jobs-1", "--wait", "30s", "--url", Url()}, &error);
  ASSERT_NE(waiter, nullptr) << error;
  json::object state;
  ASSERT_TRUE(Eventually([&] {
    const Outcome outcome = LockCommand({"status", "jobs-1", "--json", "--url", Url()});
    if (outcome.status != 0) return false;
    state = JsonOutput(outcome);
    return state.contains("waiters") && state.at("waiters").to_number<int>() == 1;
  }));
  EXPECT_EQ(state.at("lock").as_string(), "jobs-1");
  EXPECT_TRUE(state.at("held").as_bool());
  EXPECT_EQ(state.at("holder_token").to_number<int>(), 1);
  EXPECT_GT(state.at("expires_in_ms").to_number<std::int64_t>(), 0);
  EXPECT_LE(state.at("expires_in_ms").to_number<std::int64_t>(), 30000);
  // The holder id is the one operators see in the admin API.
  const json::value admin = AdminLock("jobs-1");
  ASSERT_TRUE(admin.is_object());
  const std::string holder_id(admin.at("holder").at("owner_id").as_string());
  EXPECT_EQ(state.at("holder_id").as_string(), holder_id);
  EXPECT_FALSE(state.contains("owner_token"));

  const Outcome text = LockCommand({"status", "jobs-1", "--url", Url()});
  ASSERT_EQ(text.status, 0) << text.stderr_text;
  ASSERT_EQ(text.stdout_lines.size(), 7u) << Joined(text.stdout_lines);
  EXPECT_EQ(text.stdout_lines[1], "held:       yes");
  EXPECT_EQ(text.stdout_lines[2], "holder:     " + holder_id);
  EXPECT_EQ(text.stdout_lines[3], "token:      1");
  EXPECT_TRUE(text.stdout_lines[4].starts_with("ttl left:   ")) << text.stdout_lines[4];
  EXPECT_TRUE(text.stdout_lines[4].ends_with(" ms")) << text.stdout_lines[4];
  EXPECT_EQ(text.stdout_lines[5], "waiters:    1");
  EXPECT_EQ(Joined(text.stdout_lines).find(owner), std::string::npos);

  // Released: the waiter gets the lock, and the status says so.
  ASSERT_EQ(Release("jobs-1", owner).result_int(), 200);
  ASSERT_EQ(waiter->Wait(std::chrono::seconds(30)), 0) << waiter->Stderr();
  const json::object after =
      JsonOutput(LockCommand({"status", "jobs-1", "--json", "--url", Url()}));
  EXPECT_EQ(after.at("holder_token").to_number<int>(), 2);
  EXPECT_EQ(after.at("waiters").to_number<int>(), 0);
}

TEST_F(LockCommandTest, JsonReportsResultsAndErrorsOnStdout) {
  const Outcome acquired = LockCommand({"acquire", "jobs-2", "--json", "--url", Url()});
  ASSERT_EQ(acquired.status, 0) << acquired.stderr_text;
  EXPECT_EQ(JsonOutput(acquired).at("fencing_token").to_number<int>(), 1);

  const Outcome held = LockCommand({"acquire", "jobs-2", "--json", "--url", Url()});
  EXPECT_EQ(held.status, 1);
  const json::object refusal = JsonOutput(held);
  EXPECT_FALSE(refusal.at("ok").as_bool());
  EXPECT_EQ(refusal.at("exit_code").to_number<int>(), 1);
  EXPECT_EQ(refusal.at("http_status").to_number<int>(), 409);
  EXPECT_NE(std::string(refusal.at("problem").at("type").as_string()).find("lock-held"),
            std::string::npos);

  const Outcome usage = LockCommand({"renew", "jobs-2", "--json", "--url", Url()});
  EXPECT_EQ(usage.status, 2);
  EXPECT_NE(std::string(JsonOutput(usage).at("error").as_string()).find("--owner"),
            std::string::npos);

  // Nothing listens on port 1: a transport failure.
  const Outcome unreachable =
      LockCommand({"status", "jobs-2", "--json", "--url", "http://127.0.0.1:1/locks/"});
  EXPECT_EQ(unreachable.status, 3);
  EXPECT_EQ(JsonOutput(unreachable).at("exit_code").to_number<int>(), 3);
}

// The traffic listener (which serves the lock API) with TLS, requiring client certificates.
class LockCommandTlsTest : public LockGatewayTest {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(MakeTestCerts(certs_, &error)) << error;
    GatewayConfig config = LockGatewayConfig(backend_.port(), dir_.Join("access.log"));
    YAML::Node listener = TlsListener(Cert("server.pem"), Cert("server.key"));
    listener["client_ca_file"] = Cert("ca.pem");
    listener["client_auth"] = "required";
    config["tls"]["traffic"] = listener;
    config_path_ = dir_.WriteFile("fencegate.yaml", config.Yaml());
    StartGateway();
  }
  std::string Cert(const std::string& name) const { return certs_ + "/" + name; }
  std::string Url(const std::string& host = "127.0.0.1") const {
    return "https://" + host + ":" + std::to_string(gateway_->traffic_port()) + "/locks/";
  }
  // --url, the test CA and the client certificate.
  std::vector<std::string> Tls(const std::string& host = "127.0.0.1") const {
    return {"--url",
            Url(host),
            "--ca-file",
            Cert("ca.pem"),
            "--client-cert-file",
            Cert("client.pem"),
            "--client-key-file",
            Cert("client.key")};
  }
  static std::vector<std::string> With(std::vector<std::string> args,
                                       const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }

  const std::string certs_ = dir_.Join("certs");
};

TEST_F(LockCommandTlsTest, EveryVerbWorksOverMutualTls) {
  const Outcome acquired = LockCommand(With({"acquire", "tls-1", "--ttl", "30s"}, Tls()));
  ASSERT_EQ(acquired.status, 0) << acquired.stderr_text;
  ASSERT_EQ(acquired.stdout_lines.size(), 1u);
  Response grant;
  grant.body() = acquired.stdout_lines[0];
  const std::string owner = OwnerTokenOf(grant);
  EXPECT_EQ(FencingTokenOf(grant), 1u);

  const Outcome status = LockCommand(With({"status", "tls-1", "--json"}, Tls("localhost")));
  ASSERT_EQ(status.status, 0) << status.stderr_text;
  EXPECT_TRUE(JsonOutput(status).at("held").as_bool());

  const Outcome renewed = LockCommand(With({"renew", "tls-1", "--owner", owner}, Tls()));
  EXPECT_EQ(renewed.status, 0) << renewed.stderr_text;
  const Outcome released = LockCommand(With({"release", "tls-1", "--owner", owner}, Tls()));
  EXPECT_EQ(released.status, 0) << released.stderr_text;

  // run renews and releases over the same TLS connection settings.
  const Outcome run =
      LockCommand(With({"run", "tls-1", "--ttl", "1500ms"},
                       With(Tls(), {"--", "sh", "-c", "echo token=$FENCING_TOKEN"})));
  EXPECT_EQ(run.status, 0) << run.stderr_text;
  EXPECT_EQ(Joined(run.stdout_lines), "token=2\n");
}

TEST_F(LockCommandTlsTest, WithoutTheClientCertificateTheGatewayRefuses) {
  const Outcome outcome =
      LockCommand({"status", "tls-2", "--json", "--url", Url(), "--ca-file", Cert("ca.pem")});
  EXPECT_EQ(outcome.status, 3) << outcome.stderr_text;
  const json::object error = JsonOutput(outcome);
  EXPECT_EQ(error.at("exit_code").to_number<int>(), 3);
  EXPECT_NE(std::string(error.at("error").as_string()).find("--client-cert-file"),
            std::string::npos)
      << error;
}

TEST_F(LockCommandTlsTest, AWrongCaIsRefusedWithAClearError) {
  const Outcome outcome =
      LockCommand(With({"status", "tls-3"}, {"--url", Url(), "--ca-file", Cert("other_ca.pem")}));
  EXPECT_EQ(outcome.status, 3);
  EXPECT_NE(outcome.stderr_text.find("the gateway's certificate was refused"), std::string::npos)
      << outcome.stderr_text;
  EXPECT_NE(outcome.stderr_text.find("--ca-file"), std::string::npos);
  EXPECT_TRUE(outcome.stdout_lines.empty());

  // An unreadable CA file is a usage error, named as such.
  const Outcome missing =
      LockCommand({"status", "tls-3", "--url", Url(), "--ca-file", Cert("no-such-ca.pem")});
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.stderr_text.find("no-such-ca.pem"), std::string::npos);
}

TEST_F(LockCommandTlsTest, TheServerNameIsVerifiedUnlessTurnedOff) {
  const Outcome wrong_name =
      LockCommand(With({"status", "tls-4", "--server-name", "elsewhere.example"}, Tls()));
  EXPECT_EQ(wrong_name.status, 3);
  EXPECT_NE(wrong_name.stderr_text.find("hostname mismatch"), std::string::npos)
      << wrong_name.stderr_text;

  const Outcome unchecked = LockCommand(With(
      {"status", "tls-4", "--server-name", "elsewhere.example", "--no-verify-hostname"}, Tls()));
  EXPECT_EQ(unchecked.status, 0) << unchecked.stderr_text;
  EXPECT_NE(unchecked.stderr_text.find("WARNING"), std::string::npos);
}

}  // namespace
}  // namespace fencegate::integration
