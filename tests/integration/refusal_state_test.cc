// A refused write creates no state: a write refused by max_token_advance on a key that was never
// fenced leaves no fence behind (/admin/fences/{key} stays 404), and one on a fenced key leaves
// the fence as it was.

#include <string>

#include <gtest/gtest.h>

#include "tests/support/admin_client.h"
#include "tests/support/http_gateway_fixture.h"

namespace fencegate::integration {
namespace {

class RefusalStateTest : public HttpGatewayTest {
 protected:
  void CustomizeConfig(GatewayConfig* config) const override {
    config->Route("kv")["max_token_advance"] = 10;
  }

  unsigned AdminStatus(const std::string& target) {
    std::string error;
    const auto response =
        Fetch(gateway_->admin_port(), MakeRequest(http::verb::get, target), &error);
    EXPECT_TRUE(response) << error;
    return response ? response->result_int() : 0;
  }
};

TEST_F(RefusalStateTest, TooLargeAdvanceOnANeverFencedKeyCreatesNoFence) {
  const unsigned refused = Put("/kv/fresh/v", "50").result_int();
  EXPECT_EQ(refused / 100, 4u);
  EXPECT_EQ(AdminStatus("/admin/fences/kv:fresh"), 404u);
  // Refused again (nothing was kept that would change the answer) and still no fence.
  EXPECT_EQ(Put("/kv/fresh/v", "50").result_int(), refused);
  EXPECT_EQ(AdminStatus("/admin/fences/kv:fresh"), 404u);
  // A write within the bound is admitted as before.
  EXPECT_EQ(Put("/kv/fresh/v", "5").result_int() / 100, 2u);
  EXPECT_EQ(AdminStatus("/admin/fences/kv:fresh"), 200u);
  EXPECT_EQ(backend_.Requests().size(), 1u) << "refused writes never reached the backend";
}

TEST_F(RefusalStateTest, TooLargeAdvanceOnAFencedKeyLeavesTheFence) {
  ASSERT_EQ(Put("/kv/held/v", "5").result_int() / 100, 2u);
  EXPECT_EQ(Put("/kv/held/v", "100").result_int() / 100, 4u);
  std::string error;
  const auto state = FetchAdminJson(gateway_->admin_port(), "/admin/fences/kv:held", &error);
  ASSERT_TRUE(state) << error;
  EXPECT_EQ(state->as_object().at("highest_token").to_number<std::uint64_t>(), 5u);
}

}  // namespace
}  // namespace fencegate::integration
