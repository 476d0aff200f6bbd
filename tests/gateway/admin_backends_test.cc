// GET /admin/backends' JSON and the backend part of /readyz (gateway/admin/admin_backends.h),
// from the copies UpstreamServers hands out.
#include "gateway/admin/admin_backends.h"

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace fencegate::gateway {
namespace {

namespace json = boost::json;
using adapters::UpstreamServers;

UpstreamServers::ServerSnapshot Server(std::string url) {
  UpstreamServers::ServerSnapshot server;
  server.url = std::move(url);
  return server;
}

TEST(AdminBackendsTest, EveryServerWithItsStateCountsAndLastCheck) {
  adapters::BalancingOptions options;
  options.policy = adapters::BalancingPolicy::kFenceKey;
  options.health_check.emplace();
  options.health_check->path = "/healthz";
  options.limits.max_pending = 64;

  UpstreamServers::ServerSnapshot healthy = Server("http://10.0.0.1:9000");
  healthy.weight = 2;
  healthy.in_flight = 3;
  healthy.connections = 4;
  healthy.requests = 100;
  healthy.health_checks_passed = 7;
  healthy.last_check_unix_ms = 1'700'000'000'000;  // 2023-11-14T22:13:20Z
  healthy.last_check_result = "passed";
  healthy.addresses = {"10.0.0.1:9000"};

  UpstreamServers::ServerSnapshot ejected = Server("http://10.0.0.2:9000");
  ejected.usable = false;
  ejected.ejected = true;
  ejected.reason = UpstreamServers::Unusable::kServerErrors;
  ejected.ejected_for = std::chrono::milliseconds(29500);
  ejected.ejections = 1;

  UpstreamServers::ServerSnapshot unhealthy = Server("http://10.0.0.3:9000");
  unhealthy.usable = false;
  unhealthy.healthy = false;
  unhealthy.reason = UpstreamServers::Unusable::kHealthCheck;
  unhealthy.health_checks_failed = 3;
  unhealthy.last_check_unix_ms = 1'700'000'000'000;
  unhealthy.last_check_result = "failed: connection refused";

  UpstreamServers::Counters counters;
  counters.overload_max_pending = 5;
  counters.retries_connect_failed = 2;
  counters.no_healthy_server = 1;
  counters.orphaned_locks_released = 3;

  const json::object backend =
      BackendJson("api", "http", options, {healthy, ejected, unhealthy}, counters);
  EXPECT_EQ(backend.at("name"), "api");
  EXPECT_EQ(backend.at("kind"), "http");
  EXPECT_EQ(backend.at("policy"), "fence_key");
  EXPECT_EQ(backend.at("usable_servers").as_uint64(), 1u);
  EXPECT_EQ(backend.at("health_check").at("path"), "/healthz");
  EXPECT_EQ(backend.at("health_check").at("expected_status"), "200-399");
  EXPECT_EQ(backend.at("limits").at("max_pending").as_uint64(), 64u);
  EXPECT_EQ(backend.at("limits").at("max_connections").as_uint64(), 0u);
  EXPECT_EQ(backend.at("counters").at("overload_max_pending").as_uint64(), 5u);
  EXPECT_EQ(backend.at("counters").at("retries_connect_failed").as_uint64(), 2u);
  EXPECT_EQ(backend.at("counters").at("no_healthy_server").as_uint64(), 1u);
  EXPECT_EQ(backend.at("counters").at("orphaned_locks_released").as_uint64(), 3u);

  const json::array& servers = backend.at("servers").as_array();
  ASSERT_EQ(servers.size(), 3u);
  const json::object& first = servers[0].as_object();
  EXPECT_EQ(first.at("url"), "http://10.0.0.1:9000");
  EXPECT_EQ(first.at("weight").as_uint64(), 2u);
  EXPECT_EQ(first.at("state"), "healthy");
  EXPECT_EQ(first.at("usable"), true);
  EXPECT_TRUE(first.at("reason").is_null());
  EXPECT_EQ(first.at("in_flight").as_uint64(), 3u);
  EXPECT_EQ(first.at("connections").as_uint64(), 4u);
  EXPECT_EQ(first.at("requests").as_uint64(), 100u);
  EXPECT_EQ(first.at("last_check").at("at"), "2023-11-14T22:13:20.000Z");
  EXPECT_EQ(first.at("last_check").at("result"), "passed");
  EXPECT_EQ(first.at("addresses"), json::array({"10.0.0.1:9000"}));

  const json::object& second = servers[1].as_object();
  EXPECT_EQ(second.at("state"), "ejected");
  EXPECT_EQ(second.at("usable"), false);
  EXPECT_EQ(second.at("reason"), "server_errors");
  EXPECT_EQ(second.at("ejected_for_ms").as_int64(), 29500);
  EXPECT_EQ(second.at("ejections").as_uint64(), 1u);
  EXPECT_TRUE(second.at("last_check").is_null());

  const json::object& third = servers[2].as_object();
  EXPECT_EQ(third.at("state"), "unhealthy");
  EXPECT_EQ(third.at("reason"), "health_check");
  EXPECT_EQ(third.at("last_check").at("result"), "failed: connection refused");
  EXPECT_EQ(third.at("health_checks").at("failed").as_uint64(), 3u);
}

TEST(AdminBackendsTest, ABackendWithoutActiveChecksShowsNone) {
  const json::object backend =
      BackendJson("objects", "s3", adapters::BalancingOptions{}, {Server("http://s3:7480")}, {});
  EXPECT_EQ(backend.at("policy"), "round_robin");
  EXPECT_TRUE(backend.at("health_check").is_null());
  EXPECT_EQ(backend.at("servers").as_array().size(), 1u);
}

TEST(AdminBackendsTest, AFilesystemBackendIsListedWithoutServers) {
  const json::object backend = BackendJson("files", "filesystem", nullptr);
  EXPECT_EQ(backend.at("kind"), "filesystem");
  EXPECT_TRUE(backend.at("policy").is_null());
  EXPECT_TRUE(backend.at("servers").as_array().empty());
}

TEST(AdminBackendsTest, ConditionVerdictsWithTheirProbes) {
  EXPECT_TRUE(ConditionsJson(nullptr).is_null());
  adapters::ConditionProbeOptions options;
  options.prefix = "probes/";
  adapters::ConditionBook book("objects", options);
  book.Record({.scope = "photos",
               .verdict = adapters::ConditionVerdict::kIgnored,
               .probes = {{"put-if-match-wrong-etag", false, true, "PUT answered 200, not 412"}},
               .checked_unix_ms = 1'700'000'000'000});
  book.Record({.scope = "logs", .verdict = adapters::ConditionVerdict::kPending});
  const json::object conditions = ConditionsJson(&book).as_object();
  EXPECT_EQ(conditions.at("policy"), "verify");
  EXPECT_EQ(conditions.at("probe_prefix"), "probes/");
  EXPECT_EQ(conditions.at("probe_interval_ms"), 600000);
  const json::array& reports = conditions.at("reports").as_array();
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].at("scope"), "logs");
  EXPECT_EQ(reports[0].at("verdict"), "pending");
  EXPECT_TRUE(reports[0].at("checked_at").is_null());
  EXPECT_EQ(reports[1].at("verdict"), "ignored");
  EXPECT_EQ(reports[1].at("checked_at"), "2023-11-14T22:13:20.000Z");
  const json::object& probe = reports[1].at("probes").as_array().at(0).as_object();
  EXPECT_EQ(probe.at("name"), "put-if-match-wrong-etag");
  EXPECT_EQ(probe.at("holds"), false);
  EXPECT_EQ(probe.at("required"), true);
  EXPECT_EQ(probe.at("detail"), "PUT answered 200, not 412");
}

TEST(AdminBackendsTest, OnlyRequiredRoutesWhoseBackendHasNoUsableServerAreNamed) {
  RouteConfig api_config, files_config, reports_config;
  api_config.name = "api";
  api_config.required = true;
  files_config.name = "files";
  files_config.required = true;
  reports_config.name = "reports";  // not required: its backend's state does not matter
  std::vector<RouteRuntime> routes(3);
  routes[0].config = &api_config;
  routes[0].backend_index = 0;
  routes[1].config = &files_config;
  routes[1].backend_index = 1;
  routes[2].config = &reports_config;
  routes[2].backend_index = 0;

  std::vector<bool> usable = {true, true};
  const auto backend_usable = [&](std::size_t backend) { return bool(usable[backend]); };
  EXPECT_TRUE(RequiredRoutesWithoutServer(routes, backend_usable).empty());
  usable[0] = false;
  EXPECT_EQ(RequiredRoutesWithoutServer(routes, backend_usable), std::vector<std::string>{"api"});
  usable[1] = false;
  EXPECT_EQ(RequiredRoutesWithoutServer(routes, backend_usable),
            (std::vector<std::string>{"api", "files"}));
  api_config.required = false;
  files_config.required = false;
  EXPECT_TRUE(RequiredRoutesWithoutServer(routes, backend_usable).empty());
}

}  // namespace
}  // namespace fencegate::gateway
