// The admin API a console (and a script) uses, through the real binary: the fence listing by
// page, the rejection trail's filters and paging, the records' caller fields, a fence's history,
// the summary's counts, and 400 for a query parameter a list endpoint does not take.
#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "tests/support/admin_client.h"
#include "tests/support/eventually.h"
#include "tests/support/http_gateway_fixture.h"

namespace fencegate::integration {
namespace {

namespace json = boost::json;

constexpr std::string_view kListingTraceparent =
    "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
constexpr std::string_view kListingTraceId = "0af7651916cd43dd8448eb211c80319c";

class AdminListingTest : public HttpGatewayTest {
 protected:
  json::value Admin(const std::string& target) {
    std::string error;
    std::optional<json::value> body = FetchAdminJson(gateway_->admin_port(), target, &error);
    EXPECT_TRUE(body.has_value()) << target << ": " << error;
    return body.value_or(json::value());
  }
  Response AdminRaw(const std::string& target) {
    std::string error;
    std::optional<Response> response =
        Fetch(gateway_->admin_port(), MakeRequest(http::verb::get, target), &error);
    EXPECT_TRUE(response.has_value()) << error;
    return response.value_or(Response());
  }
  // A PUT with a token and the given fields.
  Response PutWith(const std::string& target, const std::string& token,
                   std::initializer_list<std::pair<std::string, std::string>> fields = {}) {
    Request request = MakeRequest(http::verb::put, target, fields, "data");
    request.set("Fencing-Token", token);
    return Send(std::move(request));
  }
  static std::vector<std::string> FenceKeys(const json::value& page) {
    std::vector<std::string> keys;
    for (const json::value& fence : page.at("fences").as_array()) {
      keys.emplace_back(fence.at("fence_key").as_string());
    }
    return keys;
  }
  static std::vector<std::string> RequestIds(const json::value& page) {
    std::vector<std::string> ids;
    for (const json::value& record : page.at("rejections").as_array()) {
      ids.emplace_back(record.at("request_id").as_string());
    }
    return ids;
  }
};

TEST_F(AdminListingTest, FencesAreListedInKeyOrderByPage) {
  for (const char* item : {"c", "a", "b", "d"}) {
    ASSERT_EQ(Put(std::string("/kv/") + item + "/x", "3").result_int(), 200);
  }
  json::value page = Admin("/admin/fences?prefix=kv:&limit=3");
  EXPECT_EQ(FenceKeys(page), (std::vector<std::string>{"kv:a", "kv:b", "kv:c"}));
  ASSERT_TRUE(page.at("next").is_string());
  EXPECT_EQ(page.at("next").as_string(), "kv:c");
  const json::object& first = page.at("fences").as_array()[0].as_object();
  EXPECT_EQ(first.at("highest_token").to_number<std::uint64_t>(), 3u);
  EXPECT_TRUE(first.at("advanced_at").is_string());

  page = Admin("/admin/fences?prefix=kv%3A&limit=3&after=kv%3Ac");  // percent-encoded works too
  EXPECT_EQ(FenceKeys(page), (std::vector<std::string>{"kv:d"}));
  EXPECT_TRUE(page.at("next").is_null());
  EXPECT_EQ(FenceKeys(Admin("/admin/fences?prefix=kv:b")), (std::vector<std::string>{"kv:b"}));
  EXPECT_TRUE(Admin("/admin/fences?prefix=nothing").at("fences").as_array().empty());
  EXPECT_EQ(FenceKeys(Admin("/admin/fences")).size(), 4u);

  for (const char* bad : {"/admin/fences?limit=0", "/admin/fences?limit=1001",
                          "/admin/fences?limit=x", "/admin/fences?prefix=a&prefix=b"}) {
    EXPECT_EQ(AdminRaw(bad).result_int(), 400) << bad;
  }
}

TEST_F(AdminListingTest, RejectionRecordsNameTheCallerAndTheTrace) {
  ASSERT_EQ(Put("/kv/r/x", "5").result_int(), 200);
  const Response stale = PutWith(
      "/kv/r/x", "4",
      {{"User-Agent", "zombie-writer/2.1"}, {"traceparent", std::string(kListingTraceparent)}});
  ASSERT_EQ(stale.result_int(), 409);
  const json::value page = Admin("/admin/rejections");
  ASSERT_EQ(page.at("rejections").as_array().size(), 1u);
  EXPECT_TRUE(page.at("next").is_null());
  const json::object& record = page.at("rejections").as_array()[0].as_object();
  EXPECT_TRUE(record.at("sequence").is_number());
  EXPECT_TRUE(record.at("at").is_string());
  EXPECT_EQ(record.at("route").as_string(), "kv");
  EXPECT_EQ(record.at("reason").as_string(), "stale_token");
  EXPECT_EQ(record.at("fence_key").as_string(), "kv:r");
  EXPECT_EQ(record.at("method").as_string(), "PUT");
  EXPECT_EQ(record.at("path").as_string(), "/kv/r/x");
  EXPECT_EQ(record.at("presented_token").to_number<std::uint64_t>(), 4u);
  EXPECT_EQ(record.at("highest_token").to_number<std::uint64_t>(), 5u);
  EXPECT_EQ(record.at("client").as_string(), "127.0.0.1");
  EXPECT_TRUE(record.at("principal").is_null());  // an open route
  EXPECT_EQ(record.at("user_agent").as_string(), "zombie-writer/2.1");
  EXPECT_EQ(record.at("request_id").as_string(), stale["X-Request-Id"]);
  EXPECT_EQ(record.at("trace_id").as_string(), kListingTraceId);

  // A User-Agent is kept up to a bound, not whole.
  ASSERT_EQ(PutWith("/kv/r/x", "1", {{"User-Agent", std::string(5000, 'u')}}).result_int(), 409);
  const json::value newest = Admin("/admin/rejections?limit=1");
  const json::object& capped = newest.at("rejections").as_array()[0].as_object();
  EXPECT_EQ(capped.at("user_agent").as_string().size(), 256u);
  // No traceparent: the trace the gateway started for it (and passed to the backend).
  EXPECT_EQ(capped.at("trace_id").as_string().size(), 32u);
  EXPECT_NE(capped.at("trace_id").as_string(), kListingTraceId);
}

TEST_F(AdminListingTest, RejectionFiltersAndPagesWork) {
  ASSERT_EQ(Put("/kv/a/x", "5").result_int(), 200);
  ASSERT_EQ(Put("/kv/b/x", "5").result_int(), 200);
  const auto id = [](const Response& response) { return std::string(response["X-Request-Id"]); };
  const std::string a1 = id(Put("/kv/a/x", "1"));                // stale_token on kv:a
  const std::string missing = id(Put("/kv/b/x", std::nullopt));  // missing_token on kv:b
  const std::string b1 = id(Put("/kv/b/x", "2"));                // stale_token on kv:b
  const std::string a2 = id(Put("/kv/a/x", "3"));                // stale_token on kv:a

  EXPECT_EQ(RequestIds(Admin("/admin/rejections")),
            (std::vector<std::string>{a2, b1, missing, a1}));
  EXPECT_EQ(RequestIds(Admin("/admin/rejections?fence_key=kv:a")),
            (std::vector<std::string>{a2, a1}));
  EXPECT_EQ(RequestIds(Admin("/admin/rejections?reason=missing_token")),
            (std::vector<std::string>{missing}));
  EXPECT_EQ(RequestIds(Admin("/admin/rejections?route=kv&reason=stale_token&fence_key=kv%3Ab")),
            (std::vector<std::string>{b1}));
  EXPECT_TRUE(RequestIds(Admin("/admin/rejections?route=other")).empty());
  EXPECT_EQ(RequestIds(Admin("/admin/rejections?client=127.0.0.1")).size(), 4u);
  EXPECT_TRUE(RequestIds(Admin("/admin/rejections?client=10.9.9.9")).empty());
  EXPECT_TRUE(RequestIds(Admin("/admin/rejections?principal=alice")).empty());

  // since: Unix milliseconds or RFC 3339; a time in the future matches nothing, the epoch all.
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  EXPECT_TRUE(
      RequestIds(Admin("/admin/rejections?since=" + std::to_string(now_ms + 3600000))).empty());
  EXPECT_EQ(RequestIds(Admin("/admin/rejections?since=1970-01-01T00:00:00Z")).size(), 4u);
  EXPECT_TRUE(RequestIds(Admin("/admin/rejections?since=2999-01-01T00:00:00.000%2B02:00")).empty());
  const std::string newest_at(
      Admin("/admin/rejections?limit=1").at("rejections").as_array()[0].at("at").as_string());
  EXPECT_EQ(RequestIds(Admin("/admin/rejections?since=" + newest_at)).front(), a2);

  // Paging backwards with next -> after.
  json::value page = Admin("/admin/rejections?reason=stale_token&limit=2");
  EXPECT_EQ(RequestIds(page), (std::vector<std::string>{a2, b1}));
  ASSERT_TRUE(page.at("next").is_number());
  page = Admin("/admin/rejections?reason=stale_token&limit=2&after=" +
               std::to_string(page.at("next").to_number<std::uint64_t>()));
  EXPECT_EQ(RequestIds(page), (std::vector<std::string>{a1}));
  EXPECT_TRUE(page.at("next").is_null());

  for (const char* bad : {"/admin/rejections?since=yesterday", "/admin/rejections?after=0",
                          "/admin/rejections?after=x", "/admin/rejections?limit=1001",
                          "/admin/rejections?reason=a&reason=b", "/admin/rejections?routes=kv"}) {
    const Response response = AdminRaw(bad);
    EXPECT_EQ(response.result_int(), 400) << bad;
    EXPECT_EQ(response[http::field::content_type], "application/problem+json") << bad;
  }
}

TEST_F(AdminListingTest, EveryListEndpointRefusesAnUnknownParameter) {
  for (const char* endpoint :
       {"/admin/fences", "/admin/rejections", "/admin/backends", "/admin/locks",
        "/admin/lock-audit", "/admin/fence-repairs", "/admin/summary"}) {
    const Response known = AdminRaw(endpoint);
    EXPECT_EQ(known.result_int(), 200) << endpoint;
    const Response unknown = AdminRaw(std::string(endpoint) + "?bogus=1");
    EXPECT_EQ(unknown.result_int(), 400) << endpoint;
    EXPECT_EQ(unknown[http::field::content_type], "application/problem+json") << endpoint;
    EXPECT_NE(unknown.body().find("bogus"), std::string::npos) << unknown.body();
  }
  // A parameter an endpoint takes is still refused twice.
  EXPECT_EQ(AdminRaw("/admin/lock-audit?limit=1&limit=2").result_int(), 400);
  EXPECT_EQ(AdminRaw("/admin/fence-repairs?limit=5000").result_int(), 400);
  EXPECT_EQ(AdminRaw("/admin/backends?backend=api&backend=api").result_int(), 400);
  EXPECT_EQ(AdminRaw("/admin/backends?backend=api").result_int(), 200);
}

TEST_F(AdminListingTest, AFenceShowsItsAdvancesAndRefusals) {
  ASSERT_EQ(Put("/kv/h/x", "2").result_int(), 200);
  const Response advance = Put("/kv/h/x", "6");
  ASSERT_EQ(advance.result_int(), 200);
  ASSERT_EQ(Put("/kv/h/x", "6").result_int(), 200);  // at the highest: no advance
  const Response zombie = Put("/kv/h/x", "2");
  ASSERT_EQ(zombie.result_int(), 409);
  ASSERT_EQ(Put("/kv/other/x", "1").result_int(), 200);

  const json::value fence = Admin("/admin/fences/kv:h");
  EXPECT_EQ(fence.at("highest_token").to_number<std::uint64_t>(), 6u);
  const json::array& advances = fence.at("history").at("advances").as_array();
  ASSERT_EQ(advances.size(), 2u);
  EXPECT_EQ(advances[0].at("token").to_number<std::uint64_t>(), 6u);
  EXPECT_EQ(advances[0].at("request_id").as_string(), advance["X-Request-Id"]);
  EXPECT_TRUE(advances[0].at("at").is_string());
  EXPECT_EQ(advances[1].at("token").to_number<std::uint64_t>(), 2u);
  const json::array& refusals = fence.at("history").at("refusals").as_array();
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_EQ(refusals[0].at("request_id").as_string(), zombie["X-Request-Id"]);
  EXPECT_EQ(refusals[0].at("presented_token").to_number<std::uint64_t>(), 2u);
}

TEST_F(AdminListingTest, SummaryCountsRefusedWritesPerRouteReasonKeyAndClient) {
  ASSERT_EQ(Put("/kv/z/x", "9").result_int(), 200);
  for (const char* token : {"1", "2", "3"}) ASSERT_EQ(Put("/kv/z/x", token).result_int(), 409);
  ASSERT_EQ(Put("/kv/y/x", std::nullopt).result_int(), 428);

  // The series is sampled once a second: wait until the sample after the writes is in.
  json::value summary;
  const auto refused_in = [](const json::value& window, std::string_view reason) {
    std::uint64_t count = 0;
    for (const json::value& item : window.at("refusals").as_array()) {
      if (item.at("route").as_string() == "kv" && item.at("reason").as_string() == reason) {
        count += item.at("count").to_number<std::uint64_t>();
      }
    }
    return count;
  };
  ASSERT_TRUE(Eventually([&] {
    summary = Admin("/admin/summary");
    return summary.is_object() && refused_in(summary.at("last_minute"), "stale_token") == 3 &&
           refused_in(summary.at("last_minute"), "missing_token") == 1;
  })) << json::serialize(summary);
  EXPECT_EQ(refused_in(summary.at("last_hour"), "stale_token"), 3u);
  const json::array& admitted = summary.at("last_minute").at("admitted").as_array();
  ASSERT_EQ(admitted.size(), 1u);
  EXPECT_EQ(admitted[0].at("route").as_string(), "kv");
  EXPECT_EQ(admitted[0].at("count").to_number<std::uint64_t>(), 1u);

  const json::object& series = summary.at("series").as_object();
  EXPECT_EQ(series.at("interval_seconds").to_number<int>(), 1);
  EXPECT_TRUE(series.at("end").is_string());
  const json::object& kv = series.at("routes").as_array().at(0).as_object();
  EXPECT_EQ(kv.at("route").as_string(), "kv");
  ASSERT_EQ(kv.at("refused").as_array().size(), 60u);
  ASSERT_EQ(kv.at("admitted").as_array().size(), 60u);
  std::uint64_t refused_total = 0;
  for (const json::value& count : kv.at("refused").as_array()) {
    refused_total += count.to_number<std::uint64_t>();
  }
  EXPECT_EQ(refused_total, 4u);

  const json::array& keys = summary.at("top_fence_keys").as_array();
  ASSERT_FALSE(keys.empty());
  EXPECT_EQ(keys[0].at("fence_key").as_string(), "kv:z");
  EXPECT_EQ(keys[0].at("refusals").to_number<std::uint64_t>(), 3u);
  const json::array& clients = summary.at("top_clients").as_array();
  ASSERT_EQ(clients.size(), 1u);
  EXPECT_EQ(clients[0].at("client").as_string(), "127.0.0.1");
  EXPECT_EQ(clients[0].at("refusals").to_number<std::uint64_t>(), 4u);

  EXPECT_EQ(summary.at("store").at("kind").as_string(), "rocksdb");
  EXPECT_TRUE(summary.at("store").at("ready").as_bool());
  // The admitted write's fsync, once a sample after it is in: a bucket bound in milliseconds.
  ASSERT_TRUE(Eventually([&] {
    summary = Admin("/admin/summary");
    return summary.is_object() && summary.at("store").at("sync_p99_ms").is_number();
  })) << json::serialize(summary);
  EXPECT_GT(summary.at("store").at("sync_p99_ms").to_number<double>(), 0.0);
  EXPECT_TRUE(summary.at("cluster").is_null());
  const json::array& backends = summary.at("backends").as_array();
  ASSERT_EQ(backends.size(), 1u);
  EXPECT_EQ(backends[0].at("backend").as_string(), "api");
  EXPECT_EQ(backends[0].at("servers").to_number<int>(), 1);
  EXPECT_TRUE(summary.at("locks").is_object());
  EXPECT_FALSE(summary.at("build").at("version").as_string().empty());
  EXPECT_TRUE(summary.at("build").at("started_at").is_string());
  EXPECT_TRUE(summary.at("generated_at").is_string());
}

// A route guarded by an API key: the record names the authenticated principal, and the trail
// filters by it.
class AdminListingPrincipalTest : public AdminListingTest {
 protected:
  static constexpr const char* kKey = "listing-writer-4d1c9e";
  // printf %s listing-writer-4d1c9e | sha256sum
  static constexpr const char* kKeySha256 =
      "02939325b0ffb9011ed8e3307469118f009390953ddc5e27a2f6a469b3d13f63";
  void CustomizeConfig(GatewayConfig* config) const override {
    YAML::Node kv = config->Route("kv");
    kv["policy"]["read"] = Sequence({"deployer"});
    kv["policy"]["write"] = Sequence({"deployer"});
    kv["policy"]["advance"]["deployer"] = Sequence({"kv:"});
    YAML::Node principal;
    principal["name"] = "deployer";
    principal["api_key_sha256"] = Sequence({kKeySha256});
    (*config)["auth"]["principals"].push_back(principal);
  }
  Response PutAs(const std::string& target, const std::string& token) {
    return PutWith(target, token, {{"Authorization", std::string("Bearer ") + kKey}});
  }
};

TEST_F(AdminListingPrincipalTest, RecordsNameTheAuthenticatedPrincipal) {
  ASSERT_EQ(PutAs("/kv/p/x", "4").result_int(), 200);
  ASSERT_EQ(PutAs("/kv/p/x", "3").result_int(), 409);
  const json::value page = Admin("/admin/rejections?principal=deployer");
  ASSERT_EQ(page.at("rejections").as_array().size(), 1u);
  const json::object& record = page.at("rejections").as_array()[0].as_object();
  EXPECT_EQ(record.at("principal").as_string(), "deployer");
  EXPECT_EQ(record.at("reason").as_string(), "stale_token");
  EXPECT_TRUE(Admin("/admin/rejections?principal=someone").at("rejections").as_array().empty());
}

}  // namespace
}  // namespace fencegate::integration
