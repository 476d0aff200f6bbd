#include "gateway/session/idempotency_hook.h"

#include <string>

#include "base/encoding/sha256.h"

#include <gtest/gtest.h>

namespace fencegate::gateway {
namespace {

using State = lockstore::IdempotencyRecord::State;
namespace net = boost::asio;

constexpr std::int64_t kNow = 1'700'000'000'000;

IdempotencyConfig SmallConfig() {
  IdempotencyConfig config;
  config.expire_after = std::chrono::seconds(60);
  config.max_response_bytes = 8;
  return config;
}

// A hook engaged and claimed, as after the store kept its in-flight marker.
void ClaimFresh(IdempotencyHook& hook, const IdempotencyConfig& config) {
  hook.Engage(config, "key-1");
  (void)hook.Marker("route", "fence/a", std::nullopt, "POST", "/a", kNow);
  hook.Claim();
}

TEST(IdempotencyHookTest, DisengagedUntilAKeyAndResetAfterEachRequest) {
  const IdempotencyConfig config = SmallConfig();
  IdempotencyHook hook;
  EXPECT_FALSE(hook.engaged());
  EXPECT_FALSE(hook.claimed());
  ClaimFresh(hook, config);
  EXPECT_TRUE(hook.engaged());
  EXPECT_TRUE(hook.claimed());
  EXPECT_EQ(hook.key(), "key-1");
  hook.Reset();
  EXPECT_FALSE(hook.engaged());
  EXPECT_FALSE(hook.claimed());
  EXPECT_TRUE(hook.scope_key().empty());
}

TEST(IdempotencyHookTest, MarkerIsTheInFlightRecordUnderTheScopeKey) {
  const IdempotencyConfig config = SmallConfig();
  IdempotencyHook hook;
  hook.Engage(config, "key-1");
  const lockstore::IdempotencyRecord marker =
      hook.Marker("route", "fence/a", std::nullopt, "POST", "/a", kNow);
  EXPECT_EQ(marker.state, State::kInFlight);
  EXPECT_EQ(marker.created_ms, kNow);
  EXPECT_EQ(marker.expires_ms, kNow + 60'000);
  EXPECT_EQ(marker.request_digest, RequestDigest("POST", "/a"));
  EXPECT_EQ(hook.scope_key(), IdempotencyScopeKey("route", "fence/a", "", "key-1"));
  EXPECT_TRUE(hook.SameRequestHead(marker));

  // The identity is hashed into the key, and a present but empty identity is an identity.
  IdempotencyHook with_identity;
  with_identity.Engage(config, "key-1");
  (void)with_identity.Marker("route", "fence/a", "alice", "POST", "/a", kNow);
  EXPECT_EQ(with_identity.scope_key(),
            IdempotencyScopeKey("route", "fence/a", encoding::Sha256Of("alice"), "key-1"));
  IdempotencyHook empty_identity;
  empty_identity.Engage(config, "key-1");
  (void)empty_identity.Marker("route", "fence/a", "", "POST", "/a", kNow);
  EXPECT_EQ(empty_identity.scope_key(),
            IdempotencyScopeKey("route", "fence/a", encoding::Sha256Of(""), "key-1"));
  EXPECT_NE(empty_identity.scope_key(), hook.scope_key());
}

TEST(IdempotencyHookTest, CompletedOutcomeKeepsTheResponseAndTheBodyFingerprint) {
  const IdempotencyConfig config = SmallConfig();
  IdempotencyHook hook;
  ClaimFresh(hook, config);
  hook.OnRequestBody("ab", 2);
  hook.OnRequestBody("c", 1);

  adapters::ResponseHeader header;
  header.result(201);
  header.set("ETag", "\"v1\"");
  header.set("Connection", "keep-alive");  // per connection: never stored
  hook.OnResponseHeader(header);
  EXPECT_EQ(header[kIdempotencyExpiresField], HttpDate(kNow + 60'000));
  hook.OnResponseBody(net::buffer("done", 4));

  const lockstore::IdempotencyRecord record =
      hook.ResponseOutcome(/*body_done=*/true, 201, /*upstream_status=*/0, kNow);
  EXPECT_FALSE(hook.claimed());
  EXPECT_EQ(record.state, State::kCompleted);
  EXPECT_EQ(record.upstream_status, 201u);
  EXPECT_EQ(record.body_digest, encoding::Sha256Of("abc"));
  EXPECT_EQ(record.expires_ms, kNow + 60'000);
  StoredResponse stored;
  ASSERT_TRUE(DecodeStoredResponse(record.response, &stored));
  EXPECT_EQ(stored.status, 201u);
  EXPECT_EQ(stored.body, "done");
  EXPECT_EQ(stored.fields["ETag"], "\"v1\"");
  EXPECT_EQ(stored.fields.count("Connection"), 0u);
}

TEST(IdempotencyHookTest, ResponseOverTheLimitIsNotKept) {
  const IdempotencyConfig config = SmallConfig();  // 8 bytes
  IdempotencyHook hook;
  ClaimFresh(hook, config);
  hook.OnResponseBody(net::buffer("12345", 5));
  hook.OnResponseBody(net::buffer("67890", 5));
  const lockstore::IdempotencyRecord record = hook.ResponseOutcome(true, 200, 200, kNow);
  EXPECT_EQ(record.state, State::kUnknown);
  EXPECT_TRUE(record.response.empty());
}

TEST(IdempotencyHookTest, UnreadBodyOrBrokenExchangeLeavesTheOutcomeUnknown) {
  const IdempotencyConfig config = SmallConfig();
  IdempotencyHook partial;
  ClaimFresh(partial, config);
  const lockstore::IdempotencyRecord unread =
      partial.ResponseOutcome(/*body_done=*/false, 200, 0, kNow);
  EXPECT_EQ(unread.state, State::kUnknown);
  EXPECT_TRUE(unread.body_digest.empty());

  IdempotencyHook broken;
  ClaimFresh(broken, config);
  const lockstore::IdempotencyRecord record =
      broken.UnknownOutcome(/*body_done=*/true, /*status=*/0, /*upstream_status=*/0, kNow);
  EXPECT_EQ(record.state, State::kUnknown);
  EXPECT_EQ(record.upstream_status, 0u);
  EXPECT_EQ(record.body_digest, encoding::Sha256Of(""));
  EXPECT_FALSE(broken.claimed());
}

TEST(IdempotencyHookTest, StoredRecordMatchesOnlyTheSameBody) {
  const IdempotencyConfig config = SmallConfig();
  lockstore::IdempotencyRecord stored;
  stored.state = State::kCompleted;
  stored.request_digest = RequestDigest("POST", "/a");
  stored.body_digest = encoding::Sha256Of("same");

  IdempotencyHook same;
  same.Engage(config, "key-1");
  (void)same.Marker("route", "fence/a", std::nullopt, "POST", "/a", kNow);
  ASSERT_TRUE(same.SameRequestHead(stored));
  same.MatchAgainst(stored);
  EXPECT_FALSE(same.claimed());  // matching owes the store nothing
  same.OnRequestBody("sa", 2);
  same.OnRequestBody("me", 2);
  EXPECT_TRUE(same.BodyMatchesStored());
  EXPECT_EQ(same.stored().state, State::kCompleted);

  IdempotencyHook other;
  other.Engage(config, "key-1");
  (void)other.Marker("route", "fence/a", std::nullopt, "POST", "/a", kNow);
  other.MatchAgainst(stored);
  other.OnRequestBody("different", 9);
  EXPECT_FALSE(other.BodyMatchesStored());

  IdempotencyHook elsewhere;
  elsewhere.Engage(config, "key-1");
  (void)elsewhere.Marker("route", "fence/a", std::nullopt, "PUT", "/b", kNow);
  EXPECT_FALSE(elsewhere.SameRequestHead(stored));
}

TEST(IdempotencyHookTest, BodyIsNotFingerprintedUnlessClaimedOrMatching) {
  const IdempotencyConfig config = SmallConfig();
  IdempotencyHook hook;
  hook.Engage(config, "key-1");
  (void)hook.Marker("route", "fence/a", std::nullopt, "POST", "/a", kNow);
  hook.OnRequestBody("ignored", 7);  // neither claimed nor matching: not hashed
  hook.Claim();
  hook.OnRequestBody("abc", 3);
  EXPECT_EQ(hook.ResponseOutcome(true, 200, 200, kNow).body_digest, encoding::Sha256Of("abc"));
}

}  // namespace
}  // namespace fencegate::gateway
