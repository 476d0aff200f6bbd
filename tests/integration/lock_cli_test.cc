// `fencegate lock ...`, the lock API's client in the real binary, against a real gateway.

#include <signal.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/lock_test_support.h"
#include "tests/support/process.h"

namespace fencegate::integration {
namespace {

class LockCliTest : public LockGatewayTest {
 protected:
  std::string Url() const {
    return "http://127.0.0.1:" + std::to_string(gateway_->traffic_port()) + "/locks/";
  }
  std::unique_ptr<Process> Lock(std::vector<std::string> args) {
    args.insert(args.begin(), {FencegateBinary(), "lock"});
    std::string error;
    auto process = Process::Start(args, &error);
    EXPECT_NE(process, nullptr) << error;
    return process;
  }
  // Runs to completion; returns the exit status and leaves the output in `process`.
  int Finish(Process& process) {
    const auto status = process.Wait(std::chrono::seconds(60));
    EXPECT_TRUE(status.has_value());
    process.WaitForOutputEnd(std::chrono::seconds(10));
    return status.value_or(-1);
  }
};

TEST_F(LockCliTest, AcquireRenewReleaseVerbs) {
  auto acquire = Lock({"acquire", "cli-job", "--ttl", "30s", "--url", Url()});
  ASSERT_EQ(Finish(*acquire), 0) << acquire->Stderr();
  ASSERT_EQ(acquire->StdoutLines().size(), 1u);
  Response fake;
  fake.body() = acquire->StdoutLines()[0];
  const std::string owner = OwnerTokenOf(fake);
  ASSERT_EQ(owner.size(), 32u);
  EXPECT_EQ(FencingTokenOf(fake), 1u);

  auto held = Lock({"acquire", "cli-job", "--url", Url()});
  EXPECT_EQ(Finish(*held), 1);
  EXPECT_NE(held->Stderr().find("409"), std::string::npos);

  auto renew = Lock({"renew", "cli-job", "--owner", owner, "--url", Url()});
  EXPECT_EQ(Finish(*renew), 0) << renew->Stderr();
  auto release = Lock({"release", "cli-job", "--owner", owner, "--url", Url()});
  EXPECT_EQ(Finish(*release), 0) << release->Stderr();
  auto late = Lock({"renew", "cli-job", "--owner", owner, "--url", Url()});
  EXPECT_EQ(Finish(*late), 1);
  EXPECT_NE(late->Stderr().find("410"), std::string::npos);

  auto usage = Lock({"renew", "cli-job", "--url", Url()});  // no owner token
  EXPECT_EQ(Finish(*usage), 2);
  auto no_command = Lock({"run", "cli-job", "--url", Url()});
  EXPECT_EQ(Finish(*no_command), 2);
}

TEST_F(LockCliTest, RunExportsTheTokenRenewsAndReleasesWithTheCommandsStatus) {
  // The command writes through the gateway with $FENCING_TOKEN, outlives the TTL (so it needs
  // renewals), and exits 7.
  const std::string write =
      "curl -s -o /dev/null -w '%{http_code}\\n' -X PUT -H \"Fencing-Token: $FENCING_TOKEN\" "
      "--data hello http://127.0.0.1:" +
      std::to_string(gateway_->traffic_port()) + "/kv/orders-5/x";
  auto run = Lock({"run", "orders-5", "--ttl", "1500ms", "--url", Url(), "--", "sh", "-c",
                   "echo token=$FENCING_TOKEN name=$FENCEGATE_LOCK_NAME; " + write +
                       "; sleep 2.5; " + write + "; exit 7"});
  EXPECT_EQ(Finish(*run), 7) << run->Stderr();
  const auto lines = run->StdoutLines();
  ASSERT_EQ(lines.size(), 3u) << run->Stderr();
  EXPECT_EQ(lines[0], "token=1 name=orders-5");
  EXPECT_EQ(lines[1], "200");  // admitted and forwarded
  EXPECT_EQ(lines[2], "200");  // still the holder after the TTL: renewed
  const auto requests = backend_.Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].method, "PUT");
  // Released at exit: the next holder gets the next token at once.
  const Response next = Acquire("orders-5", 30000);
  ASSERT_EQ(next.result_int(), 200) << next.body();
  EXPECT_EQ(FencingTokenOf(next), 2u);
}

TEST_F(LockCliTest, RunStopsTheCommandWhenTheLeaseIsLost) {
  auto run = Lock({"run", "orders-6", "--ttl", "3s", "--kill-grace", "2s", "--url", Url(), "--",
                   "sh", "-c", "echo started $FENCING_TOKEN; exec sleep 60"});
  ASSERT_TRUE(run->WaitForStdoutLine([](const std::string& line) { return line == "started 1"; },
                                     std::chrono::seconds(20)));
  const Response forced =
      ForceRelease("orders-6", "{\"reason\":\"test\",\"operator\":\"lock_cli_test\"}");
  ASSERT_EQ(forced.result_int(), 200) << forced.body();
  // The next renewal is refused (410): the command is terminated, and `run` exits with the
  // command's status (killed by SIGTERM: 128 + 15).
  EXPECT_EQ(Finish(*run), 143) << run->Stderr();
  EXPECT_NE(run->Stderr().find("lost"), std::string::npos);
  // The old token's writes are refused by the raised fence.
  EXPECT_EQ(Write("orders-6", 1).result_int(), 409);
}

TEST_F(LockCliTest, RunStopsTheCommandWhenRenewalsCannotReachTheGateway) {
  auto run = Lock({"run", "orders-7", "--ttl", "1s", "--kill-grace", "2s", "--url", Url(), "--",
                   "sh", "-c", "echo started; exec sleep 60"});
  ASSERT_TRUE(run->WaitForStdoutLine([](const std::string& line) { return line == "started"; },
                                     std::chrono::seconds(20)));
  // A frozen gateway answers no renewal: once the client's view of the lease has run out, it
  // must assume the lock is gone.
  gateway_->process().Signal(SIGSTOP);
  const int status = Finish(*run);
  gateway_->process().Signal(SIGCONT);
  EXPECT_EQ(status, 143) << run->Stderr();
  EXPECT_NE(run->Stderr().find("lost"), std::string::npos);
}

}  // namespace
}  // namespace fencegate::integration
