// Authentication and per-route authorization through the real binary: the 401/403 matrix of a
// guarded route, an open route beside it, the admin listener's own credentials, and keys that
// never reach a log. README "Authentication and authorization".

#include <cstdio>
#include <string>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/support/admin_client.h"
#include "tests/support/http_gateway_fixture.h"
#include "tests/support/lock_test_support.h"
#include "tests/support/process.h"

namespace fencegate::integration {
namespace {

constexpr const char* kReaderKey = "reader-7f3a9c1e5b2d";
constexpr const char* kWriterKey = "writer-91bc04e6d2f8";
constexpr const char* kOwnerKey = "owner-22de7a5c81b3";  // from the api_keys_file
constexpr const char* kAdminKey = "admin-5e6f0b9d3c47";
constexpr const char* kWrongKey = "guess-000000000000";

// The hash exactly as the README tells operators to make it.
std::string Sha256Hex(const std::string& key) {
  const std::string command = "printf %s '" + key + "' | sha256sum";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {};
  char hex[65] = {};
  const std::size_t read = std::fread(hex, 1, 64, pipe);
  pclose(pipe);
  return read == 64 ? std::string(hex, 64) : std::string();
}

boost::json::object Problem(const Response& response) {
  EXPECT_EQ(response[http::field::content_type], "application/problem+json");
  boost::system::error_code ec;
  boost::json::value parsed = boost::json::parse(response.body(), ec);
  if (ec || !parsed.is_object()) {
    ADD_FAILURE() << "not a JSON object: " << response.body();
    return {};
  }
  return parsed.as_object();
}

// Route "kv" (fence key kv:<first segment>) is guarded: reader reads, writer and owner write;
// owner may raise any kv:a* fence, writer any kv:w* fence. Route "open" has no policy.
class AuthTest : public HttpGatewayTest {
 protected:
  void CustomizeConfig(GatewayConfig* config) const override {
    const std::string keys_file =
        dir_.WriteFile("api-keys", "# principal sha256\nowner " + Sha256Hex(kOwnerKey) + "\n");
    YAML::Node kv = config->Route("kv");
    kv["max_token_advance"] = 100;
    kv["policy"]["read"] = Sequence({"reader", "writer", "owner"});
    kv["policy"]["write"] = Sequence({"writer", "owner"});
    kv["policy"]["advance"]["owner"] = Sequence({"kv:a"});
    kv["policy"]["advance"]["writer"] = Sequence({"kv:w"});
    YAML::Node open = config->Route("open");
    open["prefix"] = "/open/";
    open["backend"] = "api";
    open["fence_key"] = "open:{segment:2}";
    (*config)["auth"]["principals"].push_back(Principal("reader", kReaderKey));
    (*config)["auth"]["principals"].push_back(Principal("writer", kWriterKey));
    (*config)["auth"]["api_keys_file"] = keys_file;
    (*config)["admin"]["principals"].push_back(Principal("alice", kAdminKey));
    CustomizeAuth(config);
  }
  // Lets a suite add to the auth configuration above.
  virtual void CustomizeAuth(GatewayConfig*) const {}

  // A principal known by the SHA-256 of its API key.
  static YAML::Node Principal(const std::string& name, const std::string& api_key) {
    YAML::Node principal;
    principal["name"] = name;
    principal["api_key_sha256"] = Sequence({Sha256Hex(api_key)});
    return principal;
  }

  Response Call(http::verb method, const std::string& target, const char* key,
                std::optional<int> token = std::nullopt) {
    Request request = MakeRequest(method, target, {}, method == http::verb::get ? "" : "data");
    if (key != nullptr) request.set(http::field::authorization, std::string("Bearer ") + key);
    if (token) request.set("Fencing-Token", std::to_string(*token));
    return Send(std::move(request));
  }

  Response Admin(http::verb method, const std::string& target, const char* key,
                 std::string body = {}) {
    Request request = MakeRequest(method, target, {}, std::move(body));
    if (key != nullptr) request.set(http::field::authorization, std::string("Bearer ") + key);
    std::string error;
    auto response = Fetch(gateway_->admin_port(), std::move(request), &error);
    if (!response) {
      ADD_FAILURE() << error;
      return {};
    }
    return *response;
  }

  // The fence's highest token, or nullopt when it was never fenced.
  std::optional<std::uint64_t> Highest(const std::string& key) {
    const Response response = Admin(http::verb::get, "/admin/fences/" + key, kAdminKey);
    if (response.result_int() == 404) return std::nullopt;
    EXPECT_EQ(response.result_int(), 200) << response.body();
    boost::system::error_code ec;
    const auto parsed = boost::json::parse(response.body(), ec);
    if (ec) return std::nullopt;
    return parsed.at("highest_token").to_number<std::uint64_t>();
  }

  boost::json::value FetchAdminJsonWithKey(const std::string& target) {
    const Response response = Admin(http::verb::get, target, kAdminKey);
    EXPECT_EQ(response.result_int(), 200) << target << ": " << response.body();
    boost::system::error_code ec;
    boost::json::value parsed = boost::json::parse(response.body(), ec);
    return ec ? boost::json::value(boost::json::array()) : parsed;
  }

  double Refusals(const std::string& reason) {
    const std::string metrics = Admin(http::verb::get, "/metrics", kAdminKey).body();
    return MetricValue(metrics, "fencegate_auth_refusals_total",
                       "route=\"kv\",reason=\"" + reason + "\"")
        .value_or(-1);
  }
};

TEST_F(AuthTest, UnauthenticatedIs401WithABearerChallengeAndNeverForwarded) {
  for (const http::verb method : {http::verb::get, http::verb::put}) {
    const Response none = Call(method, "/kv/a/x", nullptr, 1);
    EXPECT_EQ(none.result_int(), 401);
    EXPECT_EQ(none[http::field::www_authenticate], "Bearer realm=\"fencegate\"");
    EXPECT_EQ(Problem(none).at("reason").as_string(), "missing_credentials");

    const Response wrong = Call(method, "/kv/a/x", kWrongKey, 1);
    EXPECT_EQ(wrong.result_int(), 401);
    EXPECT_EQ(wrong[http::field::www_authenticate],
              "Bearer realm=\"fencegate\", error=\"invalid_token\"");
    EXPECT_EQ(Problem(wrong).at("reason").as_string(), "invalid_credentials");
  }
  // Another scheme, and the admin key on the traffic listener, identify nobody here.
  Request basic = MakeRequest(http::verb::get, "/kv/a/x");
  basic.set(http::field::authorization, "Basic d3JpdGVyOng=");
  EXPECT_EQ(Send(std::move(basic)).result_int(), 401);
  EXPECT_EQ(Call(http::verb::get, "/kv/a/x", kAdminKey).result_int(), 401);

  EXPECT_TRUE(backend_.Requests().empty());
  EXPECT_EQ(Highest("kv:a").value_or(0), 0u);  // the PUTs never touched the fence
  EXPECT_EQ(Refusals("missing_credentials"), 2.0);
  EXPECT_EQ(Refusals("invalid_credentials"), 4.0);
}

TEST_F(AuthTest, ReadersReadAndOnlyWritersWrite) {
  EXPECT_EQ(Call(http::verb::get, "/kv/a/x", kReaderKey).result_int(), 200);
  const Response refused = Call(http::verb::put, "/kv/a/x", kReaderKey, 1);
  EXPECT_EQ(refused.result_int(), 403);
  EXPECT_EQ(refused[http::field::www_authenticate], "");
  EXPECT_EQ(Problem(refused).at("reason").as_string(), "write_not_permitted");
  // An unfenced method other than GET/HEAD is a write too.
  EXPECT_EQ(Call(http::verb::options, "/kv/a/x", kReaderKey).result_int(), 403);
  EXPECT_EQ(Highest("kv:a").value_or(0), 0u);
  EXPECT_EQ(backend_.Requests().size(), 1u);  // the GET
  EXPECT_EQ(Refusals("write_not_permitted"), 2.0);

  // The key is the gateway's credential: the backend never sees it.
  for (const RecordedRequest& request : backend_.Requests()) {
    EXPECT_EQ(request.headers.count(http::field::authorization), 0u) << request.method;
  }
}

TEST_F(AuthTest, AdvancingTheFenceNeedsAPrefixGrant) {
  // writer may write, but kv:a is not under its grant: it cannot establish or raise that fence.
  Response response = Call(http::verb::put, "/kv/a/x", kWriterKey, 5);
  EXPECT_EQ(response.result_int(), 403);
  EXPECT_EQ(Problem(response).at("reason").as_string(), "advance_not_permitted");
  EXPECT_EQ(Highest("kv:a").value_or(0), 0u);  // never raised

  // owner holds the grant for kv:a*.
  EXPECT_EQ(Call(http::verb::put, "/kv/a/x", kOwnerKey, 5).result_int(), 200);
  EXPECT_EQ(Highest("kv:a"), 5u);
  // Now writer may write at the current highest, not above it; stale stays stale.
  EXPECT_EQ(Call(http::verb::put, "/kv/a/x", kWriterKey, 5).result_int(), 200);
  response = Call(http::verb::put, "/kv/a/x", kWriterKey, 6);
  EXPECT_EQ(response.result_int(), 403);
  const auto problem = Problem(response);
  EXPECT_EQ(problem.at("reason").as_string(), "advance_not_permitted");
  EXPECT_EQ(problem.at("highest_token").to_number<std::uint64_t>(), 5u);
  EXPECT_EQ(Call(http::verb::put, "/kv/a/x", kWriterKey, 4).result_int(), 409);
  EXPECT_EQ(Highest("kv:a"), 5u);
  // writer's own prefix: kv:w1 and kv:wide.
  EXPECT_EQ(Call(http::verb::put, "/kv/w1/x", kWriterKey, 3).result_int(), 200);
  EXPECT_EQ(Call(http::verb::put, "/kv/wide/x", kWriterKey, 9).result_int(), 200);
  EXPECT_EQ(Highest("kv:w1"), 3u);

  // Forwarded: owner's 5, writer's 5, w1, wide. Nothing else reached the backend.
  ASSERT_EQ(backend_.Requests().size(), 4u);
  EXPECT_EQ(Refusals("advance_not_permitted"), 2.0);

  // Refused writes are in the audit trail with their reason.
  auto trail = FetchAdminJsonWithKey("/admin/rejections?limit=10");
  std::size_t advance_records = 0;
  for (const auto& record : trail.at("rejections").as_array()) {
    if (record.at("reason").as_string() == "advance_not_permitted") ++advance_records;
  }
  EXPECT_EQ(advance_records, 2u);
}

TEST_F(AuthTest, AnAdvanceGrantDoesNotLiftTheRoutesMaxTokenAdvance) {
  EXPECT_EQ(Call(http::verb::put, "/kv/a/x", kOwnerKey, 100).result_int(), 200);
  // owner may advance kv:a, but not by more than max_token_advance (README "Tokens").
  Response response = Call(http::verb::put, "/kv/a/x", kOwnerKey, 201);
  EXPECT_EQ(response.result_int(), 403);
  EXPECT_EQ(Problem(response).at("reason").as_string(), "token_advance");
  // writer may not advance kv:a at all: that is the refusal it gets, whatever the distance.
  response = Call(http::verb::put, "/kv/a/x", kWriterKey, 201);
  EXPECT_EQ(response.result_int(), 403);
  EXPECT_EQ(Problem(response).at("reason").as_string(), "advance_not_permitted");
  EXPECT_EQ(Highest("kv:a"), 100u);
  EXPECT_EQ(backend_.Requests().size(), 1u);
}

TEST_F(AuthTest, RoutesWithoutAPolicyStayOpen) {
  EXPECT_EQ(Call(http::verb::get, "/open/x", nullptr).result_int(), 200);
  EXPECT_EQ(Call(http::verb::put, "/open/x", nullptr, 8).result_int(), 200);
  EXPECT_EQ(Call(http::verb::put, "/open/x", kWrongKey, 7).result_int(), 409);
  EXPECT_EQ(backend_.Requests().size(), 2u);
}

TEST_F(AuthTest, AdminNeedsItsOwnCredentialsExceptForHealth) {
  for (const char* target : {"/healthz", "/readyz"}) {
    EXPECT_EQ(Admin(http::verb::get, target, nullptr).result_int(), 200) << target;
    EXPECT_EQ(Admin(http::verb::get, target, kWrongKey).result_int(), 200) << target;
  }
  for (const char* target : {"/metrics", "/admin/rejections", "/admin/fences/kv:a", "/admin/locks",
                             "/admin/lock-audit", "/admin/nothing-here"}) {
    const Response none = Admin(http::verb::get, target, nullptr);
    EXPECT_EQ(none.result_int(), 401) << target;
    EXPECT_EQ(none[http::field::www_authenticate], "Bearer realm=\"fencegate-admin\"") << target;
    EXPECT_EQ(Problem(none).at("status").to_number<int>(), 401);
    EXPECT_EQ(Admin(http::verb::get, target, kWrongKey).result_int(), 401) << target;
    // Traffic principals are not operators.
    EXPECT_EQ(Admin(http::verb::get, target, kWriterKey).result_int(), 401) << target;
  }
  EXPECT_EQ(Admin(http::verb::get, "/admin/rejections", kAdminKey).result_int(), 200);
  EXPECT_EQ(Admin(http::verb::get, "/admin/locks", kAdminKey).result_int(), 200);
  const std::string metrics = Admin(http::verb::get, "/metrics", kAdminKey).body();
  EXPECT_EQ(
      MetricValue(metrics, "fencegate_admin_auth_refusals_total", "reason=\"missing_credentials\""),
      6.0);
  EXPECT_EQ(
      MetricValue(metrics, "fencegate_admin_auth_refusals_total", "reason=\"invalid_credentials\""),
      12.0);
}

TEST_F(AuthTest, ForcedReleaseRecordsTheAuthenticatedOperator) {
  const Response acquired =
      Send(MakeRequest(http::verb::post, "/locks/job-1", {}, "{\"ttl_ms\":60000}"));
  ASSERT_EQ(acquired.result_int(), 200) << acquired.body();

  const std::string path = "/admin/locks/job-1/force-release";
  EXPECT_EQ(Admin(http::verb::post, path, nullptr, "{\"reason\":\"x\",\"operator\":\"alice\"}")
                .result_int(),
            401);
  // The trail names who authenticated; another name in the body only lands in the reason.
  const Response forced =
      Admin(http::verb::post, path, kAdminKey, "{\"reason\":\"wedged\",\"operator\":\"bob\"}");
  ASSERT_EQ(forced.result_int(), 200) << forced.body();
  EXPECT_EQ(boost::json::parse(forced.body()).at("operator").as_string(), "alice");
  const auto audit = FetchAdminJsonWithKey("/admin/lock-audit");
  ASSERT_EQ(audit.as_array().size(), 1u);
  EXPECT_EQ(audit.as_array()[0].at("operator").as_string(), "alice");
  EXPECT_EQ(audit.as_array()[0].at("reason").as_string(), "wedged (operator field: bob)");
}

TEST_F(AuthTest, FenceRepairRecordsTheAuthenticatedOperator) {
  EXPECT_EQ(Call(http::verb::put, "/kv/a/x", kOwnerKey, 50).result_int(), 200);
  const std::string path = "/admin/fences/kv:a/repair";
  const std::string body = R"({"highest_token": 7, "reason": "inflated", "operator": "mallory"})";
  EXPECT_EQ(Admin(http::verb::post, path, nullptr, body).result_int(), 401);
  EXPECT_EQ(Admin(http::verb::post, path, kWriterKey, body).result_int(), 401);
  EXPECT_EQ(Highest("kv:a"), 50u);
  // The PUT's answer can reach us a moment before its write stops counting as in flight, which
  // a repair refuses with 409 fence-busy: retry that.
  Response repaired;
  ASSERT_TRUE(Eventually([&] {
    repaired = Admin(http::verb::post, path, kAdminKey, body);
    return repaired.result_int() != 409;
  }));
  ASSERT_EQ(repaired.result_int(), 200) << repaired.body();
  EXPECT_EQ(boost::json::parse(repaired.body()).at("operator").as_string(), "alice");
  EXPECT_EQ(Highest("kv:a"), 7u);
  // Without an operator field the principal is recorded just the same.
  const Response again = Admin(http::verb::post, path, kAdminKey,
                               R"({"highest_token": 3, "reason": "still too high"})");
  ASSERT_EQ(again.result_int(), 200) << again.body();
  const auto trail = FetchAdminJsonWithKey("/admin/fence-repairs");
  ASSERT_EQ(trail.as_array().size(), 2u);
  EXPECT_EQ(trail.as_array()[0].at("operator").as_string(), "alice");
  EXPECT_EQ(trail.as_array()[0].at("reason").as_string(), "still too high");
  EXPECT_EQ(trail.as_array()[1].at("operator").as_string(), "alice");
  EXPECT_EQ(trail.as_array()[1].at("reason").as_string(), "inflated (operator field: mallory)");
}

TEST_F(AuthTest, KeysNeverReachTheLogs) {
  for (const char* key : {kReaderKey, kWriterKey, kOwnerKey, kWrongKey, kAdminKey}) {
    Call(http::verb::get, "/kv/a/x", key);
    Call(http::verb::put, "/kv/a/x", key, 1);
    Call(http::verb::get, "/open/x", key);
    Admin(http::verb::get, "/admin/rejections", key);
  }
  EXPECT_EQ(gateway_->process().Stop(std::chrono::seconds(10)), 0);
  ASSERT_TRUE(gateway_->process().WaitForOutputEnd(std::chrono::seconds(10)));
  std::string logs = gateway_->process().Stderr();
  for (const std::string& line : gateway_->process().StdoutLines()) logs += line + "\n";
  std::string access_log;
  {
    FILE* in = std::fopen(dir_.Join("access.log").c_str(), "r");
    ASSERT_NE(in, nullptr);
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, in)) > 0;) {
      access_log.append(buffer, n);
    }
    std::fclose(in);
  }
  ASSERT_NE(access_log.find("\"status\":401"), std::string::npos) << access_log;
  ASSERT_NE(access_log.find("\"status\":403"), std::string::npos) << access_log;
  logs += access_log;
  for (const char* key : {kReaderKey, kWriterKey, kOwnerKey, kWrongKey, kAdminKey}) {
    EXPECT_EQ(logs.find(key), std::string::npos) << key;
  }
  EXPECT_EQ(logs.find("Bearer"), std::string::npos);
}

class PublicMetricsTest : public AuthTest {
 protected:
  void CustomizeAuth(GatewayConfig* config) const override {
    (*config)["admin"]["metrics_public"] = true;
  }
};

TEST_F(PublicMetricsTest, MetricsOpenOnlyWhenConfigured) {
  EXPECT_EQ(Admin(http::verb::get, "/metrics", nullptr).result_int(), 200);
  EXPECT_EQ(Admin(http::verb::get, "/admin/rejections", nullptr).result_int(), 401);
}

// The built-in lock API behind locks.policy: writer may take orders-* locks, every principal
// shared-* locks; reader and writer may read lock state.
class LockPolicyTest : public AuthTest {
 protected:
  void CustomizeAuth(GatewayConfig* config) const override {
    YAML::Node policy = (*config)["locks"]["policy"];
    policy["read"] = Sequence({"reader", "writer"});
    policy["acquire"]["writer"] = Sequence({"orders-*"});
    policy["acquire"]["*"] = Sequence({"shared-*"});
  }

  Response Lock(http::verb method, const std::string& target, const char* key,
                std::string body = {}) {
    Request request = MakeRequest(method, target, {}, std::move(body));
    if (key != nullptr) request.set(http::field::authorization, std::string("Bearer ") + key);
    return Send(std::move(request));
  }

  double LockRefusals(const std::string& reason) {
    const std::string metrics = Admin(http::verb::get, "/metrics", kAdminKey).body();
    return MetricValue(metrics, "fencegate_lock_auth_refusals_total", "reason=\"" + reason + "\"")
        .value_or(-1);
  }

  bool Held(const std::string& name) {
    const Response state = Lock(http::verb::get, "/locks/" + name, kReaderKey);
    EXPECT_EQ(state.result_int(), 200) << state.body();
    return boost::json::parse(state.body()).at("held").as_bool();
  }
};

TEST_F(LockPolicyTest, AcquireRenewAndReleaseNeedAGrantForTheLockName) {
  const std::string acquire = "{\"ttl_ms\":60000}";
  const Response none = Lock(http::verb::post, "/locks/orders-1", nullptr, acquire);
  EXPECT_EQ(none.result_int(), 401);
  EXPECT_EQ(none[http::field::www_authenticate], "Bearer realm=\"fencegate\"");
  EXPECT_EQ(Problem(none).at("reason").as_string(), "missing_credentials");
  const Response wrong = Lock(http::verb::post, "/locks/orders-1", kWrongKey, acquire);
  EXPECT_EQ(wrong.result_int(), 401);
  EXPECT_EQ(Problem(wrong).at("reason").as_string(), "invalid_credentials");
  // Authenticated, but no grant covers orders-1 for reader or owner.
  for (const char* key : {kReaderKey, kOwnerKey}) {
    const Response refused = Lock(http::verb::post, "/locks/orders-1", key, acquire);
    EXPECT_EQ(refused.result_int(), 403) << key;
    EXPECT_EQ(Problem(refused).at("reason").as_string(), "write_not_permitted");
  }
  EXPECT_FALSE(Held("orders-1"));

  const Response granted = Lock(http::verb::post, "/locks/orders-1", kWriterKey, acquire);
  ASSERT_EQ(granted.result_int(), 200) << granted.body();
  const std::string owner_body =
      "{\"owner_token\":\"" +
      std::string(boost::json::parse(granted.body()).at("owner_token").as_string()) + "\"}";
  // The owner token alone is not enough: renew and release are guarded like acquire.
  EXPECT_EQ(Lock(http::verb::post, "/locks/orders-1/release", kOwnerKey, owner_body).result_int(),
            403);
  EXPECT_EQ(Lock(http::verb::post, "/locks/orders-1/renew", nullptr, owner_body).result_int(), 401);
  EXPECT_TRUE(Held("orders-1"));
  EXPECT_EQ(Lock(http::verb::post, "/locks/orders-1/renew", kWriterKey, owner_body).result_int(),
            200);
  EXPECT_EQ(Lock(http::verb::post, "/locks/orders-1/release", kWriterKey, owner_body).result_int(),
            200);
  EXPECT_FALSE(Held("orders-1"));

  // "*" grants shared-* to every authenticated principal, and nothing else.
  EXPECT_EQ(Lock(http::verb::post, "/locks/shared-7", kOwnerKey, acquire).result_int(), 200);
  EXPECT_EQ(Lock(http::verb::post, "/locks/shared-7", nullptr, acquire).result_int(), 401);
  EXPECT_EQ(Lock(http::verb::post, "/locks/other-7", kOwnerKey, acquire).result_int(), 403);

  EXPECT_EQ(LockRefusals("missing_credentials"), 3.0);
  EXPECT_EQ(LockRefusals("invalid_credentials"), 1.0);
  EXPECT_EQ(LockRefusals("write_not_permitted"), 4.0);
  EXPECT_EQ(LockRefusals("read_not_permitted"), 0.0);
}

TEST_F(LockPolicyTest, ReadingLockStateNeedsTheReadList) {
  EXPECT_EQ(Lock(http::verb::get, "/locks/orders-2", kReaderKey).result_int(), 200);
  EXPECT_EQ(Lock(http::verb::get, "/locks/orders-2", kWriterKey).result_int(), 200);
  const Response owner = Lock(http::verb::get, "/locks/orders-2", kOwnerKey);
  EXPECT_EQ(owner.result_int(), 403);
  EXPECT_EQ(Problem(owner).at("reason").as_string(), "read_not_permitted");
  EXPECT_EQ(Lock(http::verb::get, "/locks/orders-2", nullptr).result_int(), 401);
  EXPECT_EQ(LockRefusals("read_not_permitted"), 1.0);
  EXPECT_EQ(LockRefusals("missing_credentials"), 1.0);
  // Routes keep their own policy: the lock policy grants nothing there.
  EXPECT_EQ(Refusals("missing_credentials"), 0.0);
}

// `fencegate lock` under locks.policy: the key comes from --api-key-file or $FENCEGATE_API_KEY.
TEST_F(LockPolicyTest, LockCommandSendsTheApiKey) {
  const std::string url =
      "http://127.0.0.1:" + std::to_string(gateway_->traffic_port()) + "/locks/";
  // Runs `fencegate lock ARGS`, behind `env` (whose arguments come first) when `env` is set.
  const auto run = [](std::vector<std::string> args, std::string* stdout_line,
                      std::string* stderr_text, const std::string& env = "") {
    args.insert(args.begin(), FencegateBinary());
    if (!env.empty()) args.insert(args.begin(), {"/usr/bin/env", env});
    std::string error;
    auto process = Process::Start(args, &error);
    if (process == nullptr) {
      ADD_FAILURE() << error;
      return -1;
    }
    const auto status = process->Wait(std::chrono::seconds(30));
    process->WaitForOutputEnd(std::chrono::seconds(10));
    const auto lines = process->StdoutLines();
    if (stdout_line != nullptr && !lines.empty()) *stdout_line = lines[0];
    if (stderr_text != nullptr) *stderr_text = process->Stderr();
    return status.value_or(-1);
  };
  const std::string writer_file = dir_.WriteFile("writer.key", std::string(kWriterKey) + "\n");
  const std::string wrong_file = dir_.WriteFile("wrong.key", kWrongKey);

  std::string out, err;
  EXPECT_EQ(run({"lock", "acquire", "orders-9", "--url", url}, nullptr, &err), 3);
  EXPECT_NE(err.find("HTTP 401"), std::string::npos) << err;
  EXPECT_EQ(run({"lock", "acquire", "orders-9", "--url", url, "--api-key-file", wrong_file},
                nullptr, &err),
            3);
  EXPECT_NE(err.find("invalid_credentials"), std::string::npos) << err;
  EXPECT_FALSE(Held("orders-9"));

  ASSERT_EQ(
      run({"lock", "acquire", "orders-9", "--url", url, "--api-key-file", writer_file}, &out, &err),
      0)
      << err;
  const std::string owner(boost::json::parse(out).at("owner_token").as_string());
  EXPECT_TRUE(Held("orders-9"));
  // The environment variable, through env(1): release as the writer.
  EXPECT_EQ(run({"lock", "release", "orders-9", "--owner", owner, "--url", url}, nullptr, &err,
                std::string("FENCEGATE_API_KEY=") + kWriterKey),
            0)
      << err;
  EXPECT_FALSE(Held("orders-9"));

  // A key file that cannot be read is a usage error, and nothing is sent.
  EXPECT_EQ(run({"lock", "acquire", "orders-9", "--url", url, "--api-key-file",
                 dir_.path() + "/missing.key"},
                nullptr, &err),
            2);
  EXPECT_NE(err.find("missing.key"), std::string::npos) << err;
  EXPECT_EQ(LockRefusals("missing_credentials"), 1.0);
  EXPECT_EQ(LockRefusals("invalid_credentials"), 1.0);
}

}  // namespace
}  // namespace fencegate::integration
