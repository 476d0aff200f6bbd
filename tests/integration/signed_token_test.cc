// README "Tokens" through the real binary: signed tokens from the lock API, routes that require
// them, max_token_advance, and key rotation. Every refusal is checked to leave the fence as it
// was (read back through the admin API) and to never reach the backend.

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json/serialize.hpp>

#include "tests/support/admin_client.h"
#include "tests/support/lock_test_support.h"
#include "tests/support/process.h"

namespace fencegate::integration {
namespace {

// Route "kv" (/kv/<item>/...) requires signed tokens; route "open" (/open/<item>/...) shares its
// fence keys, takes unsigned tokens but at most 100 above the highest. Locks "orders-*" raise
// and scope fence key "kv:{name}".
GatewayConfig SignedConfig(std::uint16_t backend_port, const std::string& access_log,
                           const YAML::Node& signing) {
  GatewayConfig config = GatewayConfig::HttpBackend(backend_port, access_log);
  config.Route("kv")["require_signed_tokens"] = true;
  YAML::Node open = config.Route("open");
  open["prefix"] = "/open/";
  open["backend"] = "api";
  open["fence_key"] = "kv:{segment:2}";
  open["max_token_advance"] = 100;
  YAML::Node locks = config["locks"];
  locks["min_ttl"] = "50ms";
  YAML::Node orders;
  orders["match"] = "orders-*";
  orders["fence_keys"] = Sequence({"kv:{name}"});
  locks["rules"].push_back(orders);
  locks["signing"] = signing;
  return config;
}

struct Grant {
  std::uint64_t token = 0;
  std::string owner;
  std::string signature;
  std::int64_t expires_ms = 0;
};

class SignedTokenTest : public LockGatewayTest {
 protected:
  void SetUp() override {
    dir_.WriteFile("k1.key", std::string(48, '1') + "\n");
    dir_.WriteFile("k2.key", std::string(48, '2') + "\n");
    UseKeys("k1", {"k1"});
  }

  // Rewrites the config with `keys` (files k1.key, k2.key) signing with `signing`, and
  // (re)starts the gateway on the same data directory.
  void UseKeys(const std::string& signing, const std::vector<std::string>& keys) {
    YAML::Node signing_keys;
    signing_keys["key_id"] = signing;
    for (const std::string& key : keys) {
      YAML::Node entry;
      entry["id"] = key;
      entry["secret_file"] = dir_.Join(key + ".key");
      signing_keys["keys"].push_back(entry);
    }
    config_path_ =
        dir_.WriteFile("fencegate.yaml",
                       SignedConfig(backend_.port(), dir_.Join("access.log"), signing_keys).Yaml());
    StartGateway();
  }

  Grant Take(const std::string& name, std::int64_t ttl_ms = 60000) {
    const Response response = Acquire(name, ttl_ms);
    EXPECT_EQ(response.result_int(), 200) << response.body();
    const auto body = JsonBody(response);
    Grant grant;
    grant.token = FencingTokenOf(response);
    grant.owner = OwnerTokenOf(response);
    if (const auto* sig = body.if_contains("fencing_token_signature"); sig && sig->is_string()) {
      grant.signature = std::string(sig->as_string());
    }
    if (const auto* exp = body.if_contains("signature_expires_at_ms")) {
      grant.expires_ms = exp->to_number<std::int64_t>();
    }
    EXPECT_FALSE(grant.signature.empty()) << response.body();
    return grant;
  }

  Response Put(const std::string& route, const std::string& item, std::uint64_t token,
               const std::string& signature) {
    Request request = MakeRequest(http::verb::put, "/" + route + "/" + item + "/x",
                                  {{"Fencing-Token", std::to_string(token)}}, "data");
    if (!signature.empty()) request.set("Fencing-Token-Signature", signature);
    std::string error;
    auto response = Fetch(gateway_->traffic_port(), std::move(request), &error);
    if (!response) {
      ADD_FAILURE() << "PUT failed: " << error;
      return Response{};
    }
    return *response;
  }

  std::uint64_t Highest(const std::string& item) {
    auto view = FetchAdminJson(gateway_->admin_port(), "/admin/fences/kv:" + item);
    EXPECT_TRUE(view.has_value()) << item;
    return view ? view->at("highest_token").to_number<std::uint64_t>() : 0;
  }

  double Rejected(const std::string& route, const std::string& reason) {
    return MetricValue(FetchMetricsText(gateway_->admin_port()), "fencegate_writes_rejected_total",
                       "route=\"" + route + "\",reason=\"" + reason + "\"")
        .value_or(-1);
  }

  // Expects a problem document of `type` and `status`.
  static void ExpectProblem(const Response& response, unsigned status, const std::string& type) {
    EXPECT_EQ(response.result_int(), status) << response.body();
    EXPECT_EQ(response[http::field::content_type], "application/problem+json");
    EXPECT_EQ(JsonBody(response).at("type").as_string(), "https://fencegate.dev/problems/" + type);
  }
};

TEST_F(SignedTokenTest, TheLockApisSignedTokenIsAdmitted) {
  const Grant grant = Take("orders-1");
  EXPECT_EQ(grant.signature.rfind(
                "kid=k1;exp=" + std::to_string(grant.expires_ms) + ";scope=orders-1;mac=", 0),
            0u)
      << grant.signature;
  const Response written = Put("kv", "orders-1", grant.token, grant.signature);
  EXPECT_EQ(written.result_int(), 200) << written.body();
  EXPECT_EQ(backend_.Requests().size(), 1u);

  // A renewal signs the token again for the extended lease.
  const Response renewed = Renew("orders-1", grant.owner);
  ASSERT_EQ(renewed.result_int(), 200);
  const auto body = JsonBody(renewed);
  const std::string again(body.at("fencing_token_signature").as_string());
  EXPECT_GE(body.at("signature_expires_at_ms").to_number<std::int64_t>(), grant.expires_ms);
  EXPECT_EQ(Put("kv", "orders-1", grant.token, again).result_int(), 200);
}

TEST_F(SignedTokenTest, BadTokensAreRefusedBeforeTheFence) {
  const Grant mine = Take("orders-1");
  const Grant other = Take("orders-2");
  ASSERT_EQ(Highest("orders-1"), mine.token);  // eager fencing raised it at the grant

  // Unsigned on a route that requires signatures; the inflation attack itself.
  ExpectProblem(Put("kv", "orders-1", 9223372036854775807ull, ""), 403, "unsigned-token");
  // A valid signature moved onto another token: the MAC covers the token.
  ExpectProblem(Put("kv", "orders-1", mine.token + 1000, mine.signature), 403, "forged-token");
  // A MAC changed by one character, and a key id nobody configured.
  std::string flipped = mine.signature;
  flipped.back() = flipped.back() == 'A' ? 'B' : 'A';
  ExpectProblem(Put("kv", "orders-1", mine.token, flipped), 403, "forged-token");
  std::string unknown_kid = mine.signature;
  unknown_kid.replace(0, 6, "kid=k9");
  ExpectProblem(Put("kv", "orders-1", mine.token, unknown_kid), 403, "forged-token");
  // orders-2's valid signature on orders-1's fence key.
  ExpectProblem(Put("kv", "orders-1", other.token, other.signature), 403, "token-scope-mismatch");
  // Not a signature at all.
  ExpectProblem(Put("kv", "orders-1", mine.token, "mac=abc"), 400, "invalid-token-signature");

  EXPECT_EQ(Highest("orders-1"), mine.token);
  EXPECT_EQ(Highest("orders-2"), other.token);
  EXPECT_TRUE(backend_.Requests().empty());
  EXPECT_EQ(Rejected("kv", "unsigned_token"), 1);
  EXPECT_EQ(Rejected("kv", "forged_token"), 3);
  EXPECT_EQ(Rejected("kv", "token_scope"), 1);
  EXPECT_EQ(Rejected("kv", "invalid_token"), 1);

  // The refusals are in the audit trail with their reasons (written by the store's writer
  // thread after the answer, so wait for them).
  std::optional<boost::json::value> trail;
  ASSERT_TRUE(Eventually([&] {
    trail = FetchAdminJson(gateway_->admin_port(), "/admin/rejections?limit=10");
    return trail && trail->at("rejections").as_array().size() == 6u;
  })) << (trail ? boost::json::serialize(*trail) : "no trail");
  const boost::json::array& records = trail->at("rejections").as_array();
  EXPECT_EQ(records[0].at("reason").as_string(), "invalid_token");
  EXPECT_EQ(records[5].at("reason").as_string(), "unsigned_token");

  // The holder still writes.
  EXPECT_EQ(Put("kv", "orders-1", mine.token, mine.signature).result_int(), 200);
}

// Every shape docs/BAD_INPUT.md lists as malformed is 400 invalid-token-signature, never 403
// forged-token, whatever else about the field is right: a client must be able to tell a broken
// signature from a forged one. The MAC shapes keep the valid signature's other parameters.
TEST_F(SignedTokenTest, MalformedSignaturesAre400NotForged) {
  const Grant mine = Take("orders-1");
  const std::string mac = mine.signature.substr(mine.signature.find(";mac=") + 5);
  ASSERT_EQ(mac.size(), 43u) << mine.signature;
  const std::string without_mac = mine.signature.substr(0, mine.signature.find(";mac="));
  const std::string exp = "exp=" + std::to_string(mine.expires_ms);
  const std::vector<std::string> malformed = {
      // 43 characters, but not base64url: standard base64's '+' and '/', padding, a space.
      without_mac + ";mac=" + mac.substr(0, 42) + "+",
      without_mac + ";mac=/" + mac.substr(1),
      without_mac + ";mac=" + mac.substr(0, 42) + "=",
      without_mac + ";mac=" + mac.substr(0, 20) + " " + mac.substr(21),
      without_mac + ";mac=" + mac.substr(0, 42) + "\xc3",
      // One character short or long.
      without_mac + ";mac=" + mac.substr(0, 42),
      mine.signature + "A",
      // A parameter missing, repeated or unknown; a bad exp; a bad kid or scope.
      "kid=k1;" + exp + ";scope=orders-1",
      mine.signature + ";kid=k1",
      mine.signature + ";nonce=1",
      "kid=k1;exp=-5;scope=orders-1;mac=" + mac,
      "kid=k1;exp=1e12;scope=orders-1;mac=" + mac,
      "kid=k 1;" + exp + ";scope=orders-1;mac=" + mac,
      "kid=k1;" + exp + ";scope=orders/1;mac=" + mac,
      "KID=k1;" + exp + ";scope=orders-1;mac=" + mac,
  };
  const double forged_before = Rejected("kv", "forged_token");
  const double invalid_before = std::max(0.0, Rejected("kv", "invalid_token"));
  for (const std::string& field : malformed) {
    ExpectProblem(Put("kv", "orders-1", mine.token, field), 400, "invalid-token-signature");
  }
  EXPECT_EQ(Rejected("kv", "invalid_token") - invalid_before,
            static_cast<double>(malformed.size()));
  EXPECT_EQ(Rejected("kv", "forged_token"), forged_before);
  EXPECT_EQ(Highest("orders-1"), mine.token);
  EXPECT_TRUE(backend_.Requests().empty());
  EXPECT_EQ(Put("kv", "orders-1", mine.token, mine.signature).result_int(), 200);
}

TEST_F(SignedTokenTest, ExpiredSignatureIsRefused) {
  const Grant grant = Take("orders-1", 100);
  // Wait (on the wall clock the signature carries) until its lease has ended.
  ASSERT_TRUE(Eventually([&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
               .count() > grant.expires_ms;
  }));
  ExpectProblem(Put("kv", "orders-1", grant.token, grant.signature), 403, "expired-token");
  EXPECT_EQ(Highest("orders-1"), grant.token);
  EXPECT_TRUE(backend_.Requests().empty());
  EXPECT_EQ(Rejected("kv", "expired_token"), 1);
}

TEST_F(SignedTokenTest, MaxTokenAdvanceBoundsUnsignedTokens) {
  const Grant grant = Take("orders-1");  // fence kv:orders-1 at grant.token
  const std::uint64_t base = grant.token;
  const Response inflated = Put("open", "orders-1", 9223372036854775807ull, "");
  ExpectProblem(inflated, 403, "token-advance-too-large");
  EXPECT_EQ(JsonBody(inflated).at("highest_token").to_number<std::uint64_t>(), base);
  ExpectProblem(Put("open", "orders-1", base + 101, ""), 403, "token-advance-too-large");
  EXPECT_EQ(Highest("orders-1"), base);
  EXPECT_TRUE(backend_.Requests().empty());
  EXPECT_EQ(Rejected("open", "token_advance"), 2);

  // Exactly 100 above is admitted, then the bound moves with the fence.
  EXPECT_EQ(Put("open", "orders-1", base + 100, "").result_int(), 200);
  EXPECT_EQ(Put("open", "orders-1", base + 200, "").result_int(), 200);
  EXPECT_EQ(Highest("orders-1"), base + 200);
  // A never-fenced key counts from 0.
  ExpectProblem(Put("open", "fresh", 101, ""), 403, "token-advance-too-large");
  EXPECT_EQ(Put("open", "fresh", 100, "").result_int(), 200);
  // A forged signature does not lift the bound: it is refused as forged.
  std::string flipped = grant.signature;
  flipped.back() = flipped.back() == 'A' ? 'B' : 'A';
  ExpectProblem(Put("open", "orders-1", base + 5000, flipped), 403, "forged-token");
  EXPECT_EQ(Highest("orders-1"), base + 200);
}

TEST_F(SignedTokenTest, ASignedTokenMayJumpPastMaxTokenAdvance) {
  // 150 grants take the lock's counter (and its fence) to 150; a repair sets the fence back to
  // 0, so the current holder's token is 150 above it, past route "open"'s bound of 100.
  Grant grant;
  for (int i = 0; i < 150; ++i) {
    grant = Take("orders-1");
    ASSERT_EQ(Release("orders-1", grant.owner).result_int(), 200);
  }
  grant = Take("orders-1");
  ASSERT_EQ(grant.token, 151u);
  const Response repaired = Post(gateway_->admin_port(), "/admin/fences/kv:orders-1/repair",
                                 R"({"highest_token": 0, "reason": "test", "operator": "t"})");
  ASSERT_EQ(repaired.result_int(), 200) << repaired.body();

  ExpectProblem(Put("open", "orders-1", grant.token, ""), 403, "token-advance-too-large");
  EXPECT_EQ(Highest("orders-1"), 0u);
  EXPECT_EQ(Put("open", "orders-1", grant.token, grant.signature).result_int(), 200);
  EXPECT_EQ(Highest("orders-1"), grant.token);
}

TEST_F(SignedTokenTest, RotatedOutKeysStopVerifyingListedOnesKeepVerifying) {
  const Grant old_grant = Take("orders-1");
  ASSERT_EQ(old_grant.signature.rfind("kid=k1;", 0), 0u);

  // Rotation, step 1: k2 signs, k1 still verifies. The held lock survives the restart.
  UseKeys("k2", {"k1", "k2"});
  EXPECT_EQ(Put("kv", "orders-1", old_grant.token, old_grant.signature).result_int(), 200);
  const Grant new_grant = Take("orders-2");
  ASSERT_EQ(new_grant.signature.rfind("kid=k2;", 0), 0u);
  EXPECT_EQ(Put("kv", "orders-2", new_grant.token, new_grant.signature).result_int(), 200);

  // Step 2: k1 is dropped. Its signatures no longer verify; k2's do.
  UseKeys("k2", {"k2"});
  ExpectProblem(Put("kv", "orders-1", old_grant.token, old_grant.signature), 403, "forged-token");
  EXPECT_EQ(Put("kv", "orders-2", new_grant.token, new_grant.signature).result_int(), 200);
  EXPECT_EQ(backend_.Requests().size(), 3u);
}

TEST_F(SignedTokenTest, LockCommandPrintsAndExportsTheSignature) {
  const std::string url =
      "http://127.0.0.1:" + std::to_string(gateway_->traffic_port()) + "/locks/";
  std::string error;
  auto acquire =
      Process::Start({FencegateBinary(), "lock", "acquire", "orders-7", "--url", url}, &error);
  ASSERT_NE(acquire, nullptr) << error;
  ASSERT_EQ(acquire->Wait(std::chrono::seconds(60)), 0) << acquire->Stderr();
  acquire->WaitForOutputEnd(std::chrono::seconds(10));
  ASSERT_EQ(acquire->StdoutLines().size(), 1u);
  Response printed;
  printed.body() = acquire->StdoutLines()[0];
  const auto body = JsonBody(printed);
  ASSERT_TRUE(body.contains("fencing_token_signature")) << printed.body();
  EXPECT_EQ(Put("kv", "orders-7", FencingTokenOf(printed),
                std::string(body.at("fencing_token_signature").as_string()))
                .result_int(),
            200);
  EXPECT_EQ(Release("orders-7", OwnerTokenOf(printed)).result_int(), 200);

  // `lock run` hands both header values to the command, which writes with curl's headers.
  auto run = Process::Start({FencegateBinary(), "lock", "run", "orders-8", "--url", url, "--",
                             "/bin/sh", "-c", "echo \"$FENCING_TOKEN $FENCING_TOKEN_SIGNATURE\""},
                            &error);
  ASSERT_NE(run, nullptr) << error;
  ASSERT_EQ(run->Wait(std::chrono::seconds(60)), 0) << run->Stderr();
  run->WaitForOutputEnd(std::chrono::seconds(10));
  ASSERT_FALSE(run->StdoutLines().empty());
  const std::string line = run->StdoutLines().back();
  const auto space = line.find(' ');
  ASSERT_NE(space, std::string::npos) << line;
  EXPECT_EQ(line.substr(space + 1).rfind("kid=k1;", 0), 0u) << line;
}

}  // namespace
}  // namespace fencegate::integration
