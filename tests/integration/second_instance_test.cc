// A second fencegate on an address the first one serves must not start: two gateways behind one
// port would each keep their own fences, and the kernel would split the clients between them.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/fencegate_run.h"
#include "tests/support/http_gateway_fixture.h"

namespace fencegate::integration {
namespace {

using ::testing::HasSubstr;
using SecondInstanceTest = HttpGatewayTest;

TEST_F(SecondInstanceTest, SecondProcessOnTheSameOrAnOverlappingAddressExitsThree) {
  const std::string port = std::to_string(gateway_->traffic_port());
  ASSERT_EQ(Put("/kv/one/x", "5", "first").result_int(), 200);

  // The same address, and the wildcard addresses that cover it (IPv6's takes IPv4 too); each
  // with its own data dir and admin port, as an operator starting a second copy by mistake would.
  int attempt = 0;
  for (const std::string& address : {"127.0.0.1:" + port, "0.0.0.0:" + port, "[::]:" + port}) {
    const Finished second =
        RunFencegate({"--config", config_path_, "--listen", address, "--admin-listen",
                      "127.0.0.1:0", "--data-dir", dir_.Join("second" + std::to_string(++attempt))},
                     std::chrono::seconds(20));
    EXPECT_EQ(second.status, 3) << address << ": " << second.stderr_text;
    EXPECT_THAT(second.stderr_text, HasSubstr("traffic address " + address)) << address;
    EXPECT_EQ(second.stdout_text.find("fencegate listening"), std::string::npos) << address;
  }

  // Every fresh connection still reaches the first gateway and its fence: none gets the 2xx a
  // gateway without the fence at 5 would give.
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(Put("/kv/one/x", "3", "zombie").result_int(), 409) << "connection " << i;
  }
  EXPECT_EQ(backend_.Requests().size(), 1u);
}

}  // namespace
}  // namespace fencegate::integration
