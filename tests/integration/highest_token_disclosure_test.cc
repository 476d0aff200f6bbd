// Per route disclose_highest_token (README "Refusals") through the real binary: who sees the
// fence's highest token in a refusal, for the gateway's own fence and for a fence a backend
// holds, and that a reload changes it.
#include <string>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/support/admin_client.h"
#include "tests/support/http_gateway_fixture.h"

namespace fencegate::integration {
namespace {

constexpr const char* kDisclosureKey = "writer-4c1d9e7a2b60";
// SHA-256 of kDisclosureKey (printf %s KEY | sha256sum).
constexpr const char* kDisclosureKeyDigest =
    "2102ced72e3410b8c5755dbea8832e650c7ef7c5193aa517d46d01afff20004f";

boost::json::object ProblemOf(const Response& response) {
  boost::system::error_code ec;
  boost::json::value parsed = boost::json::parse(response.body(), ec);
  if (ec || !parsed.is_object()) {
    ADD_FAILURE() << "not a JSON object: " << response.body();
    return {};
  }
  return parsed.as_object();
}

// Authentication is configured (principal "writer"), so route "kv" (no policy, no explicit
// value) defaults to authenticated. Route "hidden" says never, "shown" always. Routes "fa" and
// "fb" share one filesystem backend under different fence keys: a write through "fa" leaves a
// higher token in the stored file than "fb"'s fence knows, so "fb" gets the backend's refusal.
class HighestTokenDisclosureTest : public HttpGatewayTest {
 protected:
  void CustomizeConfig(GatewayConfig* config) const override { Configure(config, "never"); }

  void Configure(GatewayConfig* config, const std::string& hidden) const {
    YAML::Node principal;
    principal["name"] = "writer";
    principal["api_key_sha256"] = Sequence({kDisclosureKeyDigest});
    (*config)["auth"]["principals"].push_back(principal);
    config->Route("hidden", "/hidden/", "api", "hidden:{segment:2}")["disclose_highest_token"] =
        hidden;
    config->Route("shown", "/shown/", "api", "shown:{segment:2}")["disclose_highest_token"] =
        "always";
    config->Backend("files") = FilesystemBackendAt("{data_dir}/files");
    config->Route("fa", "/fa/", "files", "fa:{path}")["disclose_highest_token"] = "always";
    config->Route("fb", "/fb/", "files", "fb:{path}")["disclose_highest_token"] = hidden;
  }

  Response PutAs(const std::string& target, std::uint64_t token, const char* key) {
    Request request = MakeRequest(http::verb::put, target, {}, "data");
    request.set("Fencing-Token", std::to_string(token));
    if (key != nullptr) request.set(http::field::authorization, std::string("Bearer ") + key);
    return Send(std::move(request));
  }

  // The refusal of a write with token 3 after one with token 8 on `target`.
  boost::json::object StaleRefusal(const std::string& target, const char* key = nullptr) {
    EXPECT_EQ(PutAs(target, 8, nullptr).result_int(), 200) << target;
    const Response refused = PutAs(target, 3, key);
    EXPECT_EQ(refused.result_int(), 409) << refused.body();
    boost::json::object problem = ProblemOf(refused);
    EXPECT_EQ(problem.at("presented_token").to_number<std::uint64_t>(), 3u);
    EXPECT_TRUE(problem.contains("stale_reason"));
    return problem;
  }
};

TEST_F(HighestTokenDisclosureTest, AuthenticatedIsTheDefaultWithAuthentication) {
  EXPECT_FALSE(StaleRefusal("/kv/a/x").contains("highest_token"));
  const boost::json::object authenticated = StaleRefusal("/kv/b/x", kDisclosureKey);
  EXPECT_EQ(authenticated.at("highest_token").to_number<std::uint64_t>(), 8u);
  // Credentials that name nobody are anonymous.
  EXPECT_FALSE(StaleRefusal("/kv/c/x", "guess-000000000000").contains("highest_token"));
}

TEST_F(HighestTokenDisclosureTest, NeverAndAlways) {
  EXPECT_FALSE(StaleRefusal("/hidden/a/x", kDisclosureKey).contains("highest_token"));
  EXPECT_EQ(StaleRefusal("/shown/a/x").at("highest_token").to_number<std::uint64_t>(), 8u);
}

TEST_F(HighestTokenDisclosureTest, ABackendsFenceIsNotDisclosedEither) {
  ASSERT_EQ(PutAs("/fa/doc", 20, nullptr).result_int(), 201);  // created
  const Response shown = PutAs("/fa/doc", 4, nullptr);
  ASSERT_EQ(shown.result_int(), 409) << shown.body();
  EXPECT_EQ(ProblemOf(shown).at("highest_token").to_number<std::uint64_t>(), 20u);

  // fb's fence admits 5; the stored file carries 20.
  const Response hidden = PutAs("/fb/doc", 5, kDisclosureKey);
  ASSERT_EQ(hidden.result_int(), 409) << hidden.body();
  const boost::json::object problem = ProblemOf(hidden);
  EXPECT_EQ(problem.at("type").as_string(),
            "https://fencegate.dev/problems/stale-token-at-backend");
  EXPECT_FALSE(problem.contains("highest_token"));
  EXPECT_EQ(std::string(problem.at("detail").as_string()).find("20"), std::string::npos)
      << problem.at("detail").as_string();
}

TEST_F(HighestTokenDisclosureTest, AReloadChangesIt) {
  EXPECT_FALSE(StaleRefusal("/hidden/a/x").contains("highest_token"));
  GatewayConfig config = GatewayConfig::HttpBackend(backend_.port(), dir_.Join("access.log"));
  Configure(&config, "always");
  dir_.WriteFile("fencegate.yaml", config.Yaml());
  std::string error;
  auto reloaded =
      Fetch(gateway_->admin_port(), MakeRequest(http::verb::post, "/admin/reload"), &error);
  ASSERT_TRUE(reloaded) << error;
  ASSERT_EQ(reloaded->result_int(), 200) << reloaded->body();
  EXPECT_EQ(StaleRefusal("/hidden/b/x").at("highest_token").to_number<std::uint64_t>(), 8u);
}

}  // namespace
}  // namespace fencegate::integration
