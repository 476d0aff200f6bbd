// Why a stale token is stale (docs/LOCKS_AND_TOKENS.md "Why a token is stale"), through the real
// binary: one refusal per reason. Locks "orders-*" raise fence key "kv:{name}"
// (lock_test_support.h), so tokens the lock API granted for them are explained by how their leases
// ended; a token from elsewhere is superseded.
#include <string>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/support/admin_client.h"
#include "tests/support/lock_test_support.h"

namespace fencegate::integration {
namespace {

using StaleReasonTest = LockGatewayTest;

// The refusal of a write with `token` to the item of lock `name`: 409 and its problem.
boost::json::object StaleTokenProblem(const Response& response) {
  EXPECT_EQ(response.result_int(), 409) << response.body();
  const boost::json::object problem = JsonBody(response);
  EXPECT_EQ(problem.at("type").as_string(), "https://fencegate.dev/problems/stale-token");
  return problem;
}

TEST_F(StaleReasonTest, ATokenFromElsewhereIsSuperseded) {
  ASSERT_EQ(Write("plain", 7).result_int(), 200);
  const boost::json::object problem = StaleTokenProblem(Write("plain", 3));
  EXPECT_EQ(problem.at("stale_reason").as_string(), "superseded");
  EXPECT_FALSE(problem.contains("audit_id"));
  EXPECT_EQ(problem.at("highest_token").to_number<std::uint64_t>(), 7u);
}

TEST_F(StaleReasonTest, AReleasedLeaseIsReleased) {
  const Response first = Acquire("orders-1", 60000);
  ASSERT_EQ(first.result_int(), 200) << first.body();
  ASSERT_EQ(Write("orders-1", FencingTokenOf(first)).result_int(), 200);
  ASSERT_EQ(Release("orders-1", OwnerTokenOf(first)).result_int(), 200);
  const Response second = Acquire("orders-1", 60000);
  ASSERT_EQ(second.result_int(), 200) << second.body();

  const boost::json::object problem = StaleTokenProblem(Write("orders-1", FencingTokenOf(first)));
  EXPECT_EQ(problem.at("stale_reason").as_string(), "released");
  EXPECT_EQ(problem.at("presented_token").to_number<std::uint64_t>(), FencingTokenOf(first));
  // The current holder's token is fine; a number above it came from elsewhere.
  ASSERT_EQ(Write("orders-1", FencingTokenOf(second) + 5).result_int(), 200);
  EXPECT_EQ(
      StaleTokenProblem(Write("orders-1", FencingTokenOf(second))).at("stale_reason").as_string(),
      "superseded");
}

TEST_F(StaleReasonTest, AnExpiredLeaseIsLeaseExpired) {
  const Response old_holder = Acquire("orders-2", 300);
  ASSERT_EQ(old_holder.result_int(), 200) << old_holder.body();
  // The next holder waits for the old lease to run out, then its grant raises the fence.
  const Response new_holder = Acquire("orders-2", 60000, 20000, std::chrono::seconds(30));
  ASSERT_EQ(new_holder.result_int(), 200) << new_holder.body();

  const boost::json::object problem =
      StaleTokenProblem(Write("orders-2", FencingTokenOf(old_holder)));
  EXPECT_EQ(problem.at("stale_reason").as_string(), "lease-expired");
  EXPECT_FALSE(problem.contains("audit_id"));
}

TEST_F(StaleReasonTest, AForcedReleaseIsForceReleasedWithItsAuditRecord) {
  const Response holder = Acquire("orders-3", 60000);
  ASSERT_EQ(holder.result_int(), 200) << holder.body();
  const Response forced =
      ForceRelease("orders-3", "{\"reason\":\"worker wedged\",\"operator\":\"alice\"}");
  ASSERT_EQ(forced.result_int(), 200) << forced.body();

  const boost::json::object problem = StaleTokenProblem(Write("orders-3", FencingTokenOf(holder)));
  EXPECT_EQ(problem.at("stale_reason").as_string(), "force-released");
  std::string error;
  auto audit = FetchAdminJson(gateway_->admin_port(), "/admin/lock-audit?limit=1", &error);
  ASSERT_TRUE(audit) << error;
  ASSERT_EQ(audit->as_array().size(), 1u);
  EXPECT_EQ(problem.at("audit_id").to_number<std::uint64_t>(),
            audit->as_array()[0].at("sequence").to_number<std::uint64_t>());
}

}  // namespace
}  // namespace fencegate::integration
