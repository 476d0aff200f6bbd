// Audited fence repair through the real binary (README "Tokens"): an inflated fence is set back
// by POST /admin/fences/{key}/repair, which is refused while a write is in flight, audited,
// counted, and survives a restart; the read-only fence endpoint never lowers anything.

#include <future>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/admin_client.h"
#include "tests/support/lock_test_support.h"

namespace fencegate::integration {
namespace {

constexpr std::uint64_t kInflated = 9223372036854775807ull;

class FenceRepairTest : public LockGatewayTest {
 protected:
  Response Put(const std::string& item, std::uint64_t token, int delay_ms = 0) {
    Request request = MakeRequest(http::verb::put, "/kv/" + item + "/x",
                                  {{"Fencing-Token", std::to_string(token)}}, "data");
    if (delay_ms > 0) request.set("X-Test-Delay-Ms", std::to_string(delay_ms));
    std::string error;
    auto response = Fetch(gateway_->traffic_port(), std::move(request), &error);
    if (!response) ADD_FAILURE() << "PUT failed: " << error;
    return response.value_or(Response{});
  }

  Response RepairFence(const std::string& encoded_key, const std::string& body) {
    return Post(gateway_->admin_port(), "/admin/fences/" + encoded_key + "/repair", body);
  }

  // The gateway completes a write just after its response is sent, so a client can see the
  // answer while the write still counts as in flight for a moment: wait until it no longer does.
  void WaitIdle(const std::string& item) {
    ASSERT_TRUE(Eventually([&] {
      auto view = FetchAdminJson(gateway_->admin_port(), "/admin/fences/kv:" + item);
      return view && view->at("writes_in_flight").to_number<std::uint64_t>() == 0 &&
             view->at("writes_waiting").to_number<std::uint64_t>() == 0;
    }));
  }

  std::uint64_t Highest(const std::string& item) {
    auto view = FetchAdminJson(gateway_->admin_port(), "/admin/fences/kv:" + item);
    EXPECT_TRUE(view.has_value()) << item;
    return view ? view->at("highest_token").to_number<std::uint64_t>() : 0;
  }

  static std::string Type(const Response& response) {
    return std::string(JsonBody(response).at("type").as_string());
  }
};

TEST_F(FenceRepairTest, InflatedFenceIsRepairedAuditedAndStaysRepairedAfterRestart) {
  ASSERT_EQ(Put("a", 5).result_int(), 200);
  ASSERT_EQ(Put("a", kInflated).result_int(), 200);  // the inflation attack
  EXPECT_EQ(Put("a", 6).result_int(), 409);          // every holder is locked out
  WaitIdle("a");

  const Response repaired =
      RepairFence("kv%3Aa", R"({"highest_token": 5, "reason": "token inflated by a broken client",
                   "operator": "alice"})");
  ASSERT_EQ(repaired.result_int(), 200) << repaired.body();
  const auto record = JsonBody(repaired);
  EXPECT_EQ(record.at("fence_key").as_string(), "kv:a");
  EXPECT_EQ(record.at("previous_highest").to_number<std::uint64_t>(), kInflated);
  EXPECT_EQ(record.at("highest_token").to_number<std::uint64_t>(), 5u);
  EXPECT_EQ(record.at("operator").as_string(), "alice");
  EXPECT_EQ(Highest("a"), 5u);

  EXPECT_EQ(Put("a", 6).result_int(), 200);  // the next holder writes again
  EXPECT_EQ(Put("a", 4).result_int(), 409);  // and the fence still fences
  EXPECT_EQ(
      MetricValue(FetchMetricsText(gateway_->admin_port()), "fencegate_fence_repairs_total", ""),
      1.0);

  // Without an operator the audit says "unknown".
  WaitIdle("a");
  ASSERT_EQ(RepairFence("kv:a", R"({"highest_token": 0, "reason": "reset"})").result_int(), 200);

  StartGateway();  // the repair and its audit are durable
  EXPECT_EQ(Highest("a"), 0u);
  auto trail = FetchAdminJson(gateway_->admin_port(), "/admin/fence-repairs?limit=10");
  ASSERT_TRUE(trail.has_value());
  ASSERT_EQ(trail->as_array().size(), 2u);
  EXPECT_EQ(trail->as_array()[0].at("operator").as_string(), "unknown");
  EXPECT_EQ(trail->as_array()[0].at("previous_highest").to_number<std::uint64_t>(), 6u);
  EXPECT_EQ(trail->as_array()[1].at("operator").as_string(), "alice");
  EXPECT_EQ(trail->as_array()[1].at("reason").as_string(), "token inflated by a broken client");
}

TEST_F(FenceRepairTest, RefusedWhileAWriteIsInFlight) {
  ASSERT_EQ(Put("b", 100).result_int(), 200);
  // A write held at the backend for a while keeps the fence busy.
  auto slow = std::async(std::launch::async, [&] { return Put("b", 100, 1500); });
  ASSERT_TRUE(backend_.WaitForArrived(2, std::chrono::seconds(10)));
  const Response busy = RepairFence("kv:b", R"({"highest_token": 1, "reason": "x"})");
  EXPECT_EQ(busy.result_int(), 409) << busy.body();
  EXPECT_EQ(Type(busy), "https://fencegate.dev/problems/fence-busy");
  EXPECT_EQ(busy[http::field::retry_after], "1");
  EXPECT_EQ(Highest("b"), 100u);

  EXPECT_EQ(slow.get().result_int(), 200);
  WaitIdle("b");
  ASSERT_EQ(RepairFence("kv:b", R"({"highest_token": 1, "reason": "x"})").result_int(), 200);
  EXPECT_EQ(Highest("b"), 1u);
}

TEST_F(FenceRepairTest, BadRepairsChangeNothing) {
  ASSERT_EQ(Put("c", 50).result_int(), 200);
  WaitIdle("c");
  struct Case {
    std::string key;
    std::string body;
    unsigned status;
    std::string type;
  };
  const std::vector<Case> cases = {
      {"kv:c", R"({"highest_token": 1})", 400, "bad-request"},
      {"kv:c", R"({"reason": "x"})", 400, "bad-request"},
      {"kv:c", R"({"highest_token": -1, "reason": "x"})", 400, "bad-request"},
      {"kv:c", R"({"highest_token": 9223372036854775808, "reason": "x"})", 400, "bad-request"},
      {"kv:c", R"({"highest_token": 1, "reason": ""})", 400, "bad-request"},
      {"kv:c", R"({"highest_token": 1, "reason": "x", "force": true})", 400, "bad-request"},
      {"kv:c", "not json", 400, "bad-request"},
      {"kv%zz", R"({"highest_token": 1, "reason": "x"})", 400, "bad-request"},
      {"kv:c", R"({"highest_token": 50, "reason": "x"})", 409, "repair-not-lower"},
      {"kv:c", R"({"highest_token": 60, "reason": "raise"})", 409, "repair-not-lower"},
      {"kv:never", R"({"highest_token": 1, "reason": "x"})", 404, "fence-not-found"},
  };
  for (const Case& c : cases) {
    const Response response = RepairFence(c.key, c.body);
    EXPECT_EQ(response.result_int(), c.status) << c.body << " " << response.body();
    EXPECT_EQ(response[http::field::content_type], "application/problem+json") << c.body;
    EXPECT_EQ(Type(response), "https://fencegate.dev/problems/" + c.type) << c.body;
  }
  // The read-only fence endpoint takes no writes, whatever the body says.
  const Response post =
      Post(gateway_->admin_port(), "/admin/fences/kv:c", R"({"highest_token": 1, "reason": "x"})");
  EXPECT_EQ(post.result_int(), 405);
  EXPECT_EQ(Highest("c"), 50u);
  auto trail = FetchAdminJson(gateway_->admin_port(), "/admin/fence-repairs");
  ASSERT_TRUE(trail.has_value());
  EXPECT_TRUE(trail->as_array().empty());
  EXPECT_EQ(
      MetricValue(FetchMetricsText(gateway_->admin_port()), "fencegate_fence_repairs_total", ""),
      0.0);
}

}  // namespace
}  // namespace fencegate::integration
