// Idempotency keys through the real binary in front of a RecordingBackend, which counts how
// often each operation was applied (one recorded request = one application).
#include <signal.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json/parse.hpp>

#include "tests/support/eventually.h"
#include "tests/support/http_gateway_fixture.h"

namespace fencegate::integration {
namespace {

class IdempotencyTest : public HttpGatewayTest {
 protected:
  void CustomizeConfig(GatewayConfig* config) const override {
    YAML::Node kv_idempotency = config->Route("kv")["idempotency"];
    kv_idempotency["required"] = true;
    kv_idempotency["max_response_bytes"] = "1KiB";
    kv_idempotency["identity_header"] = "X-Client-Id";
    YAML::Node shortlived = Fenced(config, "short", "api");
    shortlived["idempotency"]["expire_after"] = "1s";
    YAML::Node pay = Fenced(config, "pay", "api");
    pay["idempotency"]["mode"] = "forward";
    pay["idempotency"]["forward_header"] = "X-Backend-Idempotency-Key";
    Fenced(config, "down", "down")["idempotency"] = YAML::Node(YAML::NodeType::Map);
    // A second backend, on a port nothing listens on (the gateway's own admin port is not
    // known yet; port 1 is reserved and closed on loopback).
    config->Backend("down") = HttpBackendAt(1);
  }

  // Route `name`: prefix /<name>/ to `backend`, fence key "<name>:{segment:2}".
  static YAML::Node Fenced(GatewayConfig* config, const std::string& name,
                           const std::string& backend) {
    YAML::Node route = config->Route(name);
    route["prefix"] = "/" + name + "/";
    route["backend"] = backend;
    route["fence_key"] = name + ":{segment:2}";
    return route;
  }

  Response Post(const std::string& target, const std::string& token, const std::string& key,
                std::string body,
                std::initializer_list<std::pair<std::string, std::string>> extra = {}) {
    Request request = MakeRequest(http::verb::post, target, extra, std::move(body));
    request.set("Fencing-Token", token);
    if (!key.empty()) request.set("Idempotency-Key", "\"" + key + "\"");
    return Send(std::move(request));
  }

  // How many times the backend applied a request to `target`.
  std::size_t Applied(const std::string& target) const {
    std::size_t count = 0;
    for (const RecordedRequest& request : backend_.Requests()) count += request.target == target;
    return count;
  }

  void RestartAfterKill() {
    gateway_->process().Signal(SIGKILL);
    EXPECT_EQ(gateway_->process().Wait(std::chrono::seconds(10)), 128 + SIGKILL);
    gateway_.reset();
    std::string error;
    gateway_ = GatewayInstance::Start(config_path_, dir_.Join("data"), &error);
    ASSERT_NE(gateway_, nullptr) << error;
  }

  static std::string ProblemType(const Response& response) {
    const auto json = boost::json::parse(response.body());
    return std::string(json.as_object().at("type").as_string());
  }
};

TEST_F(IdempotencyTest, RetryAfterCompletionReplaysStatusHeadersAndBody) {
  const Response first = Post("/kv/a/orders", "1", "k1", "order-1", {{"X-Test-Status", "201"}});
  ASSERT_EQ(first.result_int(), 201);
  EXPECT_EQ(first.body(), "ok");
  EXPECT_FALSE(first["Idempotency-Expires"].empty());
  EXPECT_EQ(first.count("Idempotency-Replayed"), 0u);

  for (int retry = 0; retry < 3; ++retry) {
    const Response again = Post("/kv/a/orders", "1", "k1", "order-1", {{"X-Test-Status", "201"}});
    EXPECT_EQ(again.result_int(), 201);
    EXPECT_EQ(again.body(), "ok");
    EXPECT_EQ(again["X-Backend-Sequence"], first["X-Backend-Sequence"]);
    EXPECT_EQ(again["Content-Type"], "text/plain");
    EXPECT_EQ(again["Idempotency-Replayed"], "?1");
    EXPECT_EQ(again["Idempotency-Expires"], first["Idempotency-Expires"]);
  }
  EXPECT_EQ(Applied("/kv/a/orders"), 1u);
}

TEST_F(IdempotencyTest, KeyReusedWithAnotherPayloadIs422) {
  ASSERT_EQ(Post("/kv/a/orders", "1", "k1", "order-1").result_int(), 200);
  const Response other_body = Post("/kv/a/orders", "1", "k1", "order-2");
  EXPECT_EQ(other_body.result_int(), 422);
  EXPECT_EQ(other_body[http::field::content_type], "application/problem+json");
  EXPECT_EQ(ProblemType(other_body), "https://fencegate.dev/problems/idempotency-key-reused");
  // Same fence key, other path: the fingerprint's target differs.
  EXPECT_EQ(Post("/kv/a/other", "1", "k1", "order-1").result_int(), 422);
  EXPECT_EQ(Applied("/kv/a/orders"), 1u);
  EXPECT_EQ(Applied("/kv/a/other"), 0u);
}

TEST_F(IdempotencyTest, MissingOrMalformedKeyIs400) {
  const Response missing = Post("/kv/a/orders", "1", "", "order-1");
  EXPECT_EQ(missing.result_int(), 400);
  EXPECT_EQ(ProblemType(missing), "https://fencegate.dev/problems/idempotency-key-missing");
  Request malformed = MakeRequest(http::verb::post, "/kv/a/orders", {}, "order-1");
  malformed.set("Fencing-Token", "1");
  malformed.set("Idempotency-Key", "\"unterminated");
  const Response bad = Send(std::move(malformed));
  EXPECT_EQ(bad.result_int(), 400);
  EXPECT_EQ(ProblemType(bad), "https://fencegate.dev/problems/idempotency-key-invalid");
  // Methods outside idempotency.methods need no key.
  EXPECT_EQ(Put("/kv/a/orders", "1").result_int(), 200);
  EXPECT_EQ(Applied("/kv/a/orders"), 1u);
}

TEST_F(IdempotencyTest, RetryWhileTheFirstIsInFlightIs409ThenReplays) {
  std::thread slow([&] {
    const Response first =
        Post("/kv/a/orders", "1", "k1", "order-1", {{"X-Test-Delay-Ms", "1500"}});
    EXPECT_EQ(first.result_int(), 200);
  });
  ASSERT_TRUE(backend_.WaitForArrived(1, std::chrono::seconds(10)));
  const Response busy = Post("/kv/a/orders", "1", "k1", "order-1", {{"X-Test-Delay-Ms", "1500"}});
  EXPECT_EQ(busy.result_int(), 409);
  EXPECT_EQ(busy["Retry-After"], "1");
  EXPECT_EQ(ProblemType(busy), "https://fencegate.dev/problems/idempotency-request-in-flight");
  slow.join();
  const Response replay = Post("/kv/a/orders", "1", "k1", "order-1", {{"X-Test-Delay-Ms", "1500"}});
  EXPECT_EQ(replay.result_int(), 200);
  EXPECT_EQ(replay["Idempotency-Replayed"], "?1");
  EXPECT_EQ(Applied("/kv/a/orders"), 1u);
}

// Many clients retrying many keys at once, each key several times concurrently: every
// operation is applied exactly once, and every answer is the original or an in-flight 409.
TEST_F(IdempotencyTest, ConcurrentDuplicatesApplyExactlyOnce) {
  constexpr int kKeys = 20;
  constexpr int kCopies = 4;
  std::atomic<int> unexpected{0};
  std::atomic<int> answered_ok{0};
  std::vector<std::thread> clients;
  for (int copy = 0; copy < kCopies; ++copy) {
    clients.emplace_back([&] {
      for (int key = 0; key < kKeys; ++key) {
        const std::string target = "/kv/c" + std::to_string(key) + "/op";
        const Response response =
            Post(target, "1", "key-" + std::to_string(key), "body-" + std::to_string(key));
        if (response.result_int() == 200) {
          ++answered_ok;
        } else if (response.result_int() != 409) {
          ++unexpected;
        }
      }
    });
  }
  for (std::thread& client : clients) client.join();
  EXPECT_EQ(unexpected.load(), 0);
  EXPECT_GE(answered_ok.load(), kKeys);
  for (int key = 0; key < kKeys; ++key) {
    EXPECT_EQ(Applied("/kv/c" + std::to_string(key) + "/op"), 1u) << key;
  }
}

TEST_F(IdempotencyTest, CompletedOutcomeSurvivesKillNine) {
  const Response first = Post("/kv/a/orders", "1", "k1", "order-1");
  ASSERT_EQ(first.result_int(), 200);
  RestartAfterKill();
  const Response replay = Post("/kv/a/orders", "1", "k1", "order-1");
  EXPECT_EQ(replay.result_int(), 200);
  EXPECT_EQ(replay["Idempotency-Replayed"], "?1");
  EXPECT_EQ(replay["X-Backend-Sequence"], first["X-Backend-Sequence"]);
  EXPECT_EQ(Applied("/kv/a/orders"), 1u);
}

// The gateway dies after forwarding, before the outcome is known: the retry is refused as
// "outcome unknown", never forwarded a second time.
TEST_F(IdempotencyTest, InFlightAtKillNineIsNeverAppliedTwice) {
  std::thread slow([&] {
    std::string error;
    Request request = MakeRequest(
        http::verb::post, "/kv/a/orders",
        {{"X-Test-Delay-Ms", "1500"}, {"Fencing-Token", "1"}, {"Idempotency-Key", "\"k1\""}},
        "order-1");
    // The gateway dies under this request: no answer is expected.
    Fetch(gateway_->traffic_port(), std::move(request), &error);
  });
  ASSERT_TRUE(backend_.WaitForArrived(1, std::chrono::seconds(10)));
  RestartAfterKill();
  slow.join();
  ASSERT_TRUE(backend_.WaitForCompleted(1, std::chrono::seconds(10)));
  for (int retry = 0; retry < 3; ++retry) {
    const Response again = Post("/kv/a/orders", "1", "k1", "order-1");
    EXPECT_EQ(again.result_int(), 409);
    EXPECT_EQ(ProblemType(again), "https://fencegate.dev/problems/idempotency-outcome-unknown");
  }
  EXPECT_EQ(Applied("/kv/a/orders"), 1u);
}

TEST_F(IdempotencyTest, ResponseLargerThanTheLimitIsNotKeptAndNotReapplied) {
  const Response first =
      Post("/kv/a/orders", "1", "k1", "order-1", {{"X-Test-Response-Bytes", "4096"}});
  ASSERT_EQ(first.result_int(), 200);
  EXPECT_EQ(first.body().size(), 4096u);
  const Response again =
      Post("/kv/a/orders", "1", "k1", "order-1", {{"X-Test-Response-Bytes", "4096"}});
  EXPECT_EQ(again.result_int(), 409);
  EXPECT_EQ(ProblemType(again), "https://fencegate.dev/problems/idempotency-outcome-unknown");
  EXPECT_EQ(Applied("/kv/a/orders"), 1u);
}

TEST_F(IdempotencyTest, KeysOfDifferentClientsDoNotCollide) {
  ASSERT_EQ(Post("/kv/a/orders", "1", "k1", "order-1", {{"X-Client-Id", "alice"}}).result_int(),
            200);
  const Response bob = Post("/kv/a/orders", "1", "k1", "order-1", {{"X-Client-Id", "bob"}});
  EXPECT_EQ(bob.result_int(), 200);
  EXPECT_EQ(bob.count("Idempotency-Replayed"), 0u);
  // One client key under two fence keys: two operations.
  EXPECT_EQ(Post("/kv/b/orders", "1", "k1", "order-1", {{"X-Client-Id", "alice"}}).result_int(),
            200);
  EXPECT_EQ(Applied("/kv/a/orders"), 2u);
  EXPECT_EQ(Applied("/kv/b/orders"), 1u);
}

// An expired key is a new key (the route keeps keys for 1 s).
TEST_F(IdempotencyTest, ExpiredKeyIsAppliedAgain) {
  const Response first = Post("/short/a/op", "1", "k1", "payload");
  ASSERT_EQ(first.result_int(), 200);
  const Response replay = Post("/short/a/op", "1", "k1", "payload");
  ASSERT_EQ(replay["Idempotency-Replayed"], "?1");
  // The key expires by the clock, 1 s after it was stored (a replay does not extend it): until
  // then the gateway replays, and a replay never reaches the backend. Wait for the gateway to
  // answer without replaying rather than assume when that is.
  Response after;
  EXPECT_TRUE(Eventually([&] {
    after = Post("/short/a/op", "1", "k1", "payload");
    return after.count("Idempotency-Replayed") == 0;
  }));
  EXPECT_EQ(after.result_int(), 200);
  EXPECT_EQ(after.count("Idempotency-Replayed"), 0u);
  EXPECT_EQ(Applied("/short/a/op"), 2u);
}

// A request that never reached the backend (connect refused) frees its key: the retry is
// forwarded again instead of being refused as "outcome unknown".
TEST_F(IdempotencyTest, RequestThatNeverReachedTheBackendFreesTheKey) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    const Response response = Post("/down/a/op", "1", "k1", "payload");
    EXPECT_EQ(response.result_int(), 503) << attempt;
    EXPECT_EQ(ProblemType(response), "https://fencegate.dev/problems/no-healthy-backend")
        << attempt;
  }
}

// README "Idempotency keys", fencing x idempotency.
TEST_F(IdempotencyTest, FencingAndIdempotencyTable) {
  ASSERT_EQ(Post("/kv/a/orders", "5", "k1", "order-1").result_int(), 200);
  // Same holder (same token) retries: replayed.
  EXPECT_EQ(Post("/kv/a/orders", "5", "k1", "order-1")["Idempotency-Replayed"], "?1");
  // A newer holder retries the same key: the operation already happened, replayed.
  const Response newer = Post("/kv/a/orders", "6", "k1", "order-1");
  EXPECT_EQ(newer.result_int(), 200);
  EXPECT_EQ(newer["Idempotency-Replayed"], "?1");
  // The zombie (token 5) with a new key: stale, refused before the key is looked at.
  const Response zombie_new = Post("/kv/a/orders", "5", "k2", "order-2");
  EXPECT_EQ(zombie_new.result_int(), 409);
  EXPECT_EQ(ProblemType(zombie_new), "https://fencegate.dev/problems/stale-token");
  // The zombie retrying its old key is refused as stale too.
  EXPECT_EQ(Post("/kv/a/orders", "5", "k1", "order-1").result_int(), 409);
  EXPECT_EQ(Applied("/kv/a/orders"), 1u);
}

TEST_F(IdempotencyTest, ForwardModeSendsADerivedKeyAfterTheFenceCheck) {
  ASSERT_EQ(Post("/pay/acct1/charge", "3", "k1", "10 EUR").result_int(), 200);
  ASSERT_EQ(Post("/pay/acct1/charge", "3", "k1", "10 EUR").result_int(), 200);
  ASSERT_EQ(Post("/pay/acct2/charge", "1", "k1", "10 EUR").result_int(), 200);
  // Stale: refused by the gateway, never forwarded.
  EXPECT_EQ(Post("/pay/acct1/charge", "2", "k1", "10 EUR").result_int(), 409);
  const std::vector<RecordedRequest> seen = backend_.Requests();
  ASSERT_EQ(seen.size(), 3u);
  for (const RecordedRequest& request : seen) {
    EXPECT_EQ(request.headers.count("Idempotency-Key"), 0u);
    const std::string key(request.headers["X-Backend-Idempotency-Key"]);
    EXPECT_EQ(key.size(), 64u);
    EXPECT_EQ(key.find("k1"), std::string::npos);
  }
  // The backend deduplicates the first two (same key); the other fence key gets another key.
  EXPECT_EQ(seen[0].headers["X-Backend-Idempotency-Key"],
            seen[1].headers["X-Backend-Idempotency-Key"]);
  EXPECT_NE(seen[0].headers["X-Backend-Idempotency-Key"],
            seen[2].headers["X-Backend-Idempotency-Key"]);
}

}  // namespace
}  // namespace fencegate::integration
