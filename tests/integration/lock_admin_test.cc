// Forced release on the admin listener, and the lock table across restarts, through the real
// binary.

#include <signal.h>

#include <string>

#include <gtest/gtest.h>

#include "tests/support/admin_client.h"
#include "tests/support/lock_test_support.h"
#ifdef FENCEGATE_LOCKS_IN_ETCD
#include "tests/etcd/etcd_lock_fixture.h"
#endif

namespace fencegate::integration {
namespace {

// Built twice: against the embedded store, and (tests/etcd, FENCEGATE_LOCKS_IN_ETCD) against
// a real etcd, where the same answers are expected.
#ifdef FENCEGATE_LOCKS_IN_ETCD
using LockAdminTest = etcdtest::EtcdLockGatewayTest;
#else
using LockAdminTest = LockGatewayTest;
#endif

TEST_F(LockAdminTest, ForcedReleaseNeedsReasonAndOperatorRaisesTheFenceAndIsAudited) {
  const Response holder = Acquire("orders-2", 60000);
  ASSERT_EQ(holder.result_int(), 200);
  const std::uint64_t token = FencingTokenOf(holder);
  ASSERT_EQ(Write("orders-2", token).result_int(), 200);

  for (const std::string body :
       {"", "{}", "{\"reason\":\"stuck\"}", "{\"operator\":\"alice\"}",
        "{\"reason\":\"\",\"operator\":\"alice\"}", "{\"reason\":5,\"operator\":\"alice\"}"}) {
    const Response refused = ForceRelease("orders-2", body);
    EXPECT_EQ(refused.result_int(), 400) << body;
    EXPECT_EQ(refused[http::field::content_type], "application/problem+json");
  }
  EXPECT_EQ(AdminLock("orders-2").at("held").as_bool(), true);  // nothing happened
  std::string error;
  auto get_force = Fetch(gateway_->admin_port(),
                         MakeRequest(http::verb::get, "/admin/locks/orders-2/force-release"));
  ASSERT_TRUE(get_force);
  EXPECT_EQ(get_force->result_int(), 405);

  const std::string owner_id(AdminLock("orders-2").at("holder").at("owner_id").as_string());
  const Response forced =
      ForceRelease("orders-2", "{\"reason\":\"worker wedged\",\"operator\":\"alice\"}");
  ASSERT_EQ(forced.result_int(), 200) << forced.body();
  const auto record = JsonBody(forced);
  EXPECT_EQ(record.at("operator").as_string(), "alice");
  EXPECT_EQ(record.at("reason").as_string(), "worker wedged");
  EXPECT_EQ(record.at("previous_token").to_number<std::uint64_t>(), token);
  const std::uint64_t fence_token = record.at("fence_token").to_number<std::uint64_t>();
  EXPECT_GT(fence_token, token);
  EXPECT_EQ(record.at("previous_owner_id").as_string(), owner_id);
  EXPECT_TRUE(record.at("fences").as_array()[0].at("raised").as_bool());

  // The old holder is cut off at once: renewal lost, write refused.
  EXPECT_EQ(Renew("orders-2", OwnerTokenOf(holder)).result_int(), 410);
  const std::size_t forwarded = backend_.Requests().size();
  EXPECT_EQ(Write("orders-2", token).result_int(), 409);
  EXPECT_EQ(backend_.Requests().size(), forwarded);
  EXPECT_FALSE(AdminLock("orders-2").at("held").as_bool());
  // Forcing a free lock is refused; nothing is audited for it.
  EXPECT_EQ(ForceRelease("orders-2", "{\"reason\":\"again\",\"operator\":\"bob\"}").result_int(),
            404);

  auto audit = FetchAdminJson(gateway_->admin_port(), "/admin/lock-audit?limit=10", &error);
  ASSERT_TRUE(audit) << error;
  ASSERT_EQ(audit->as_array().size(), 1u);
  EXPECT_EQ(audit->as_array()[0].at("operator").as_string(), "alice");
  EXPECT_EQ(audit->as_array()[0].at("lock").as_string(), "orders-2");
  EXPECT_FALSE(audit->as_array()[0].at("at").is_null());
  EXPECT_EQ(MetricValue(FetchMetricsText(gateway_->admin_port()),
                        "fencegate_lock_forced_releases_total", ""),
            1.0);

  // The next holder's token is above the fence token.
  const Response next = Acquire("orders-2", 60000);
  ASSERT_EQ(next.result_int(), 200);
  EXPECT_GT(FencingTokenOf(next), fence_token);

  // The audit record is durable: it is still there after a restart.
  StartGateway();
  audit = FetchAdminJson(gateway_->admin_port(), "/admin/lock-audit", &error);
  ASSERT_TRUE(audit) << error;
  ASSERT_EQ(audit->as_array().size(), 1u);
  EXPECT_EQ(audit->as_array()[0].at("reason").as_string(), "worker wedged");
}

TEST_F(LockAdminTest, RestartKeepsTokensIncreasingAndTheHolderHoldsOn) {
  std::uint64_t last = 0;
  for (int i = 0; i < 3; ++i) {
    const Response granted = Acquire("job", 60000);
    ASSERT_EQ(granted.result_int(), 200);
    last = FencingTokenOf(granted);
    ASSERT_TRUE(JsonBody(Release("job", OwnerTokenOf(granted))).at("released").as_bool());
  }
  const Response held = Acquire("job", 60000);
  ASSERT_EQ(held.result_int(), 200);
  EXPECT_EQ(FencingTokenOf(held), last + 1);
  const std::string owner = OwnerTokenOf(held);

  // kill -9: the grant was synced before it was answered.
  gateway_->process().Signal(SIGKILL);
  gateway_->process().Wait(std::chrono::seconds(10));
  StartGateway();

  // Still held by the same owner, who can renew and release.
  EXPECT_EQ(Acquire("job", 60000).result_int(), 409);
  EXPECT_EQ(Renew("job", owner).result_int(), 200);
  ASSERT_TRUE(JsonBody(Release("job", owner)).at("released").as_bool());
  const Response after = Acquire("job", 60000);
  ASSERT_EQ(after.result_int(), 200);
  EXPECT_EQ(FencingTokenOf(after), last + 2);

  // A clean restart too.
  EXPECT_EQ(gateway_->process().Stop(std::chrono::seconds(15)), 0);
  StartGateway();
  ASSERT_TRUE(JsonBody(Release("job", OwnerTokenOf(after))).at("released").as_bool());
  const Response third = Acquire("job", 60000);
  ASSERT_EQ(third.result_int(), 200);
  EXPECT_EQ(FencingTokenOf(third), last + 3);
}

}  // namespace
}  // namespace fencegate::integration
