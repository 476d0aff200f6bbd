// The built-in lock API through the real binary: acquire, renew, release, bad input, long-poll
// fairness, eager fencing, lock-delay and metrics.

#include <future>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json/serialize.hpp>

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
using LockApiTest = etcdtest::EtcdLockGatewayTest;
#else
using LockApiTest = LockGatewayTest;
#endif

std::int64_t Waiters(const boost::json::value& view) {
  return view.is_object() ? view.at("waiters").to_number<std::int64_t>() : -1;
}
bool Held(const boost::json::value& view) { return view.is_object() && view.at("held").as_bool(); }

TEST_F(LockApiTest, AcquireRenewReleaseCycle) {
  const Response first = Acquire("job", 30000);
  ASSERT_EQ(first.result_int(), 200) << first.body();
  EXPECT_EQ(first[http::field::content_type], "application/json");
  const auto body = JsonBody(first);
  EXPECT_EQ(body.at("lock").as_string(), "job");
  EXPECT_EQ(body.at("ttl_ms").to_number<std::int64_t>(), 30000);
  EXPECT_EQ(body.at("fencing_token").to_number<std::uint64_t>(), 1u);
  const std::string owner = OwnerTokenOf(first);
  EXPECT_EQ(owner.size(), 32u);

  const Response refused = Acquire("job", 30000);
  EXPECT_EQ(refused.result_int(), 409);
  EXPECT_EQ(refused[http::field::content_type], "application/problem+json");
  EXPECT_EQ(JsonBody(refused).at("type").as_string(), "https://fencegate.dev/problems/lock-held");
  EXPECT_FALSE(refused[http::field::retry_after].empty());

  const Response renewed = Renew("job", owner);
  ASSERT_EQ(renewed.result_int(), 200) << renewed.body();
  EXPECT_EQ(FencingTokenOf(renewed), 1u);

  const Response released = Release("job", owner);
  ASSERT_EQ(released.result_int(), 200) << released.body();
  EXPECT_TRUE(JsonBody(released).at("released").as_bool());
  // A retried release is answered, and changes nothing.
  EXPECT_FALSE(JsonBody(Release("job", owner)).at("released").as_bool());

  const Response late = Renew("job", owner);
  EXPECT_EQ(late.result_int(), 410);
  EXPECT_EQ(JsonBody(late).at("type").as_string(), "https://fencegate.dev/problems/lock-lost");

  const Response second = Acquire("job", 30000);
  ASSERT_EQ(second.result_int(), 200);
  EXPECT_EQ(FencingTokenOf(second), 2u);
  // The first owner's retried release does not free the second owner's lock.
  EXPECT_FALSE(JsonBody(Release("job", owner)).at("released").as_bool());
  EXPECT_TRUE(Held(AdminLock("job")));
}

TEST_F(LockApiTest, BadRequestsGetProblemDocuments) {
  const std::uint16_t port = gateway_->traffic_port();
  struct Case {
    std::string target;
    std::string body;
    unsigned status;
    std::string slug;
  };
  const std::vector<Case> cases = {
      {"/locks/bad name", "{}", 400, "bad-request"},  // a space in the target: malformed
      {"/locks/a*b", "{}", 400, "invalid-lock-name"},
      {"/locks/job", "{not json", 400, "bad-request"},
      {"/locks/job", "[1]", 400, "bad-request"},
      {"/locks/job", "{\"ttl\":5}", 400, "bad-request"},
      {"/locks/job", "{\"ttl_ms\":-5}", 400, "bad-request"},
      {"/locks/job", "{\"ttl_ms\":\"5\"}", 400, "bad-request"},
      {"/locks/job", "{\"ttl_ms\":1}", 400, "bad-request"},
      {"/locks/job", "{\"ttl_ms\":86400000}", 400, "bad-request"},
      {"/locks/job", "{\"wait_ms\":86400000}", 400, "bad-request"},
      {"/locks/job/renew", "{}", 400, "bad-request"},
      {"/locks/job/release", "{\"owner_token\":7}", 400, "bad-request"},
      {"/locks/job/steal", "{}", 404, "not-found"},
      {"/locks/job", std::string(5000, ' '), 413, "request-body-too-large"},
  };
  for (const Case& c : cases) {
    std::string error;
    auto response = Fetch(port, MakeRequest(http::verb::post, c.target, {}, c.body), &error);
    ASSERT_TRUE(response) << c.target << ": " << error;
    EXPECT_EQ(response->result_int(), c.status) << c.target << " " << c.body;
    EXPECT_EQ((*response)[http::field::content_type], "application/problem+json") << c.target;
    if (c.status != 400 || c.target != "/locks/bad name") {
      EXPECT_EQ(JsonBody(*response).at("type").as_string(),
                "https://fencegate.dev/problems/" + c.slug)
          << c.target << " " << c.body;
    }
  }
  auto get_renew = Fetch(port, MakeRequest(http::verb::get, "/locks/job/renew"));
  ASSERT_TRUE(get_renew);
  EXPECT_EQ(get_renew->result_int(), 405);
  EXPECT_EQ((*get_renew)[http::field::allow], "POST");
  auto put = Fetch(port, MakeRequest(http::verb::put, "/locks/job", {}, "{}"));
  ASSERT_TRUE(put);
  EXPECT_EQ(put->result_int(), 405);
  EXPECT_EQ((*put)[http::field::allow], "GET, HEAD, POST");
  // Forced release is not on the traffic listener.
  auto force = Fetch(port, MakeRequest(http::verb::post, "/locks/job/force-release", {}, "{}"));
  ASSERT_TRUE(force);
  EXPECT_EQ(force->result_int(), 404);
}

TEST_F(LockApiTest, LongPollWaitersAreGrantedInArrivalOrderOneAtATime) {
  const Response holder = Acquire("queue", 60000);
  ASSERT_EQ(holder.result_int(), 200);
  constexpr int kWaiters = 3;
  std::vector<std::future<Response>> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.push_back(std::async(std::launch::async, [this] {
      return Acquire("queue", 60000, 30000, std::chrono::seconds(40));
    }));
    // The next client starts only once this one is queued: arrival order is known.
    ASSERT_TRUE(Eventually([&] { return Waiters(AdminLock("queue")) == i + 1; }));
  }
  std::string owner = OwnerTokenOf(holder);
  for (int i = 0; i < kWaiters; ++i) {
    ASSERT_TRUE(JsonBody(Release("queue", owner)).at("released").as_bool());
    // Exactly the first waiter in line gets it; the others keep waiting.
    const Response granted = waiters[i].get();
    ASSERT_EQ(granted.result_int(), 200) << granted.body();
    EXPECT_EQ(FencingTokenOf(granted), static_cast<std::uint64_t>(i + 2));
    for (int j = i + 1; j < kWaiters; ++j) {
      EXPECT_EQ(waiters[j].wait_for(std::chrono::seconds(0)), std::future_status::timeout);
    }
    EXPECT_EQ(Waiters(AdminLock("queue")), kWaiters - i - 1);
    owner = OwnerTokenOf(granted);
  }
  const std::string metrics = FetchMetricsText(gateway_->admin_port());
  EXPECT_EQ(MetricValue(metrics, "fencegate_lock_acquisitions_total", ""), 4.0);
  EXPECT_EQ(MetricValue(metrics, "fencegate_lock_contention_total", ""), 3.0);
  EXPECT_EQ(MetricValue(metrics, "fencegate_lock_wait_seconds_count", ""), 4.0);
  // The holders gauge counts this process's holders; with etcd they are in etcd.
  if (!SharedStore()) {
    EXPECT_EQ(MetricValue(metrics, "fencegate_lock_holders", ""), 1.0);
  }
}

TEST_F(LockApiTest, WaitEndsWithConflictWhileStillHeld) {
  ASSERT_EQ(Acquire("busy", 60000).result_int(), 200);
  const Response waited = Acquire("busy", 1000, 200);
  EXPECT_EQ(waited.result_int(), 409);
  EXPECT_EQ(Waiters(AdminLock("busy")), 0);
}

TEST_F(LockApiTest, AWaiterThatHangsUpLeavesTheQueueAndIsNeverGranted) {
  const Response holder = Acquire("hangup", 60000);
  ASSERT_EQ(holder.result_int(), 200);
  {
    HttpConnection waiter;
    ASSERT_TRUE(waiter.Connect(gateway_->traffic_port()));
    const std::string body = "{\"ttl_ms\":60000,\"wait_ms\":60000}";
    ASSERT_TRUE(waiter.WriteRaw("POST /locks/hangup HTTP/1.1\r\nHost: t\r\nContent-Length: " +
                                std::to_string(body.size()) + "\r\n\r\n" + body));
    ASSERT_TRUE(Eventually([&] { return Waiters(AdminLock("hangup")) == 1; }));
  }  // the client closes its connection
  ASSERT_TRUE(Eventually([&] { return Waiters(AdminLock("hangup")) == 0; }));
  ASSERT_TRUE(JsonBody(Release("hangup", OwnerTokenOf(holder))).at("released").as_bool());
  // Nobody was handed the lock: the next acquire gets it at once, with the next token.
  const Response next = Acquire("hangup", 60000);
  ASSERT_EQ(next.result_int(), 200);
  EXPECT_EQ(FencingTokenOf(next), 2u);
}

TEST_F(LockApiTest, EagerFencingRefusesTheExpiredHoldersWrite) {
  const Response old_holder = Acquire("orders-1", 300);
  ASSERT_EQ(old_holder.result_int(), 200);
  const std::uint64_t old_token = FencingTokenOf(old_holder);
  ASSERT_EQ(Write("orders-1", old_token).result_int(), 200);

  // The next holder waits for the old lease to run out and gets the lock.
  const Response new_holder = Acquire("orders-1", 60000, 20000, std::chrono::seconds(30));
  ASSERT_EQ(new_holder.result_int(), 200) << new_holder.body();
  const auto fences = JsonBody(new_holder).at("fences").as_array();
  ASSERT_EQ(fences.size(), 1u);
  EXPECT_EQ(fences[0].at("fence_key").as_string(), "kv:orders-1");
  EXPECT_TRUE(fences[0].at("raised").as_bool());
  const std::uint64_t new_token = FencingTokenOf(new_holder);
  EXPECT_GT(new_token, old_token);

  // Before the new holder wrote anything, the zombie's write is already refused.
  const std::size_t forwarded = backend_.Requests().size();
  const Response zombie = Write("orders-1", old_token);
  EXPECT_EQ(zombie.result_int(), 409);
  EXPECT_EQ(JsonBody(zombie).at("highest_token").to_number<std::uint64_t>(), new_token);
  EXPECT_EQ(backend_.Requests().size(), forwarded);
  EXPECT_EQ(Renew("orders-1", OwnerTokenOf(old_holder)).result_int(), 410);
  EXPECT_EQ(Write("orders-1", new_token).result_int(), 200);

  const std::string metrics = FetchMetricsText(gateway_->admin_port());
  // With etcd, etcd ends the lease: this process does not see the expiry happen.
  if (!SharedStore()) {
    EXPECT_EQ(MetricValue(metrics, "fencegate_lock_expiries_total", ""), 1.0);
  }
  EXPECT_EQ(MetricValue(metrics, "fencegate_lock_renewal_failures_total", ""), 1.0);
}

TEST_F(LockApiTest, LockDelayAfterAnExpiredLease) {
  // The configuration refuses lock-delay with etcd (StoreConfigTest.EtcdMistakesNameLineAndKey).
  if (SharedStore()) GTEST_SKIP() << "no lock-delay with store kind etcd";
  ASSERT_EQ(Acquire("delayed-1", 100).result_int(), 200);
  ASSERT_TRUE(Eventually([&] { return !Held(AdminLock("delayed-1")); }));
  const Response refused = Acquire("delayed-1", 1000);
  if (refused.result_int() == 409) {
    EXPECT_EQ(JsonBody(refused).at("type").as_string(),
              "https://fencegate.dev/problems/lock-quarantined");
  } else {
    // The 1 s delay already ran out on a very slow machine; the grant is then legitimate.
    EXPECT_EQ(refused.result_int(), 200);
    return;
  }
  const Response later = Acquire("delayed-1", 1000, 20000, std::chrono::seconds(30));
  EXPECT_EQ(later.result_int(), 200) << later.body();
}

TEST_F(LockApiTest, PublicStateAndAdminViewsNeverShowTheOwnerToken) {
  const Response held = Acquire("visible", 60000);
  const std::string owner = OwnerTokenOf(held);
  auto state = Fetch(gateway_->traffic_port(), MakeRequest(http::verb::get, "/locks/visible"));
  ASSERT_TRUE(state);
  EXPECT_EQ(state->result_int(), 200);
  EXPECT_TRUE(JsonBody(*state).at("held").as_bool());
  EXPECT_EQ(state->body().find(owner), std::string::npos);

  auto list = FetchAdminJson(gateway_->admin_port(), "/admin/locks");
  ASSERT_TRUE(list);
  const std::string text = boost::json::serialize(*list);
  EXPECT_EQ(text.find(owner), std::string::npos);
  const auto view = AdminLock("visible");
  ASSERT_TRUE(view.is_object());
  const auto& holder = view.at("holder").as_object();
  EXPECT_EQ(holder.at("fencing_token").to_number<std::uint64_t>(), 1u);
  EXPECT_EQ(holder.at("owner_id").as_string().size(), 12u);
  EXPECT_GT(holder.at("expires_in_ms").to_number<std::int64_t>(), 0);
  std::string error;
  EXPECT_FALSE(FetchAdminJson(gateway_->admin_port(), "/admin/locks/never-used", &error));
}

}  // namespace
}  // namespace fencegate::integration
