// Backends with several servers as operators see them through the real binary (docs/UPSTREAMS.md):
// GET /admin/backends behind the admin credentials, /readyz with routes marked `required`, the
// backend metrics, and --check-config on the new keys. The servers are real nginx instances
// (Debian's nginx-light); a server that is down is a port nothing listens on.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/json.hpp>

#include "tests/support/admin_client.h"
#include "tests/support/eventually.h"
#include "tests/support/fencegate_run.h"
#include "tests/support/free_port.h"
#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace fencegate::integration {
namespace {

namespace json = boost::json;

constexpr const char* kPoolAdminKey = "pool-admin-7c1d93e4";
// printf %s pool-admin-7c1d93e4 | sha256sum
constexpr const char* kPoolAdminKeySha256 =
    "6303a8594ed38885a12efabf1262470b62fdfc727e38d26c7ac21ae1c6132540";

std::string Url(std::uint16_t port) { return "http://127.0.0.1:" + std::to_string(port); }

class BackendPoolAdminTest : public ::testing::Test {
 protected:
  void TearDown() override {
    gateway_.reset();
    for (auto& nginx : nginx_) nginx->Stop(std::chrono::seconds(10));
  }

  // One nginx answering 200 on every path at `port`, up once the port accepts.
  void StartNginx(std::uint16_t port) {
    const std::string dir = dir_.Join("nginx-" + std::to_string(port));
    std::filesystem::create_directories(dir);
    const std::string conf = dir_.WriteFile(
        "nginx-" + std::to_string(port) + "/nginx.conf",
        "daemon off;\nmaster_process off;\nworker_processes 1;\npid " + dir + "/nginx.pid;\n" +
            "error_log " + dir + "/error.log warn;\nevents { worker_connections 64; }\nhttp {\n" +
            "  access_log off;\n  client_body_temp_path " + dir + ";\n  proxy_temp_path " + dir +
            ";\n  fastcgi_temp_path " + dir + ";\n  uwsgi_temp_path " + dir +
            ";\n  scgi_temp_path " + dir + ";\n  server {\n    listen 127.0.0.1:" +
            std::to_string(port) + ";\n    location / { return 200 \"ok\\n\"; }\n  }\n}\n");
    std::string error;
    auto nginx = Process::Start({"/usr/sbin/nginx", "-p", dir, "-c", conf}, &error);
    ASSERT_NE(nginx, nullptr) << error;
    ASSERT_TRUE(Eventually([&] {
      HttpConnection probe;
      return probe.Connect(port);
    })) << "nginx did not start: "
        << nginx->Stderr();
    nginx_.push_back(std::move(nginx));
  }

  // Backend "pool" (kind http, `servers`, health checks every 100ms) behind route "pool"
  // (marked required when `required`), and backend "files" (filesystem) behind route "files".
  void StartGateway(const std::vector<std::uint16_t>& ports, bool required, bool admin_key) {
    GatewayConfig config;
    config["access_log"]["path"] = "";
    YAML::Node pool = config.Backend("pool");
    pool["kind"] = "http";
    for (std::uint16_t port : ports) pool["servers"].push_back(Url(port));
    pool["policy"] = "least_request";
    pool["health_check"]["path"] = "/health";
    pool["health_check"]["interval"] = "100ms";
    pool["health_check"]["timeout"] = "500ms";
    pool["health_check"]["healthy_threshold"] = 1;
    pool["health_check"]["unhealthy_threshold"] = 1;
    pool["limits"]["max_pending"] = 100;
    config.Route("pool", "/pool/", "pool", "pool:{segment:2}");
    if (required) config.Route("pool")["required"] = true;
    config.Backend("files")["kind"] = "filesystem";
    config.Backend("files")["root"] = dir_.Join("files");
    config.Route("files", "/files/", "files", "files:{path}");
    if (admin_key) {
      YAML::Node principal;
      principal["name"] = "ops";
      principal["api_key_sha256"].push_back(kPoolAdminKeySha256);
      config["admin"]["principals"].push_back(principal);
    }
    std::string error;
    gateway_ = GatewayInstance::Start(dir_.WriteFile("fencegate.yaml", config.Yaml()),
                                      dir_.Join("data"), &error);
    ASSERT_NE(gateway_, nullptr) << error;
  }

  std::optional<Response> Admin(const std::string& target, const std::string& key = "") {
    Request request = MakeRequest(http::verb::get, target);
    if (!key.empty()) request.set(http::field::authorization, "Bearer " + key);
    return Fetch(gateway_->admin_port(), std::move(request));
  }

  // The server `url` of backend "pool" in GET /admin/backends, or null.
  json::value PoolServer(const std::string& url) {
    const auto response = Admin("/admin/backends", kPoolAdminKey);
    if (!response || response->result() != http::status::ok) return nullptr;
    json::error_code ec;
    const json::value body = json::parse(response->body(), ec);
    return ec ? json::value(nullptr) : FindBackendServer(body, "pool", url);
  }

  bool ServerUsable(const std::string& url, bool usable) {
    const json::value server = PoolServer(url);
    return server.is_object() && server.at("usable") == usable &&
           !server.at("last_check").is_null();
  }

  TempDir dir_;
  std::vector<std::unique_ptr<Process>> nginx_;
  std::unique_ptr<GatewayInstance> gateway_;
};

TEST_F(BackendPoolAdminTest, AdminBackendsNeedsTheAdminKeyAndListsEveryBackendAndServer) {
  const std::uint16_t up = FreeLoopbackPort();
  const std::uint16_t down = FreeLoopbackPort();  // nothing listens here
  ASSERT_NO_FATAL_FAILURE(StartNginx(up));
  ASSERT_NO_FATAL_FAILURE(StartGateway({up, down}, false, true));

  const auto anonymous = Admin("/admin/backends");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->result(), http::status::unauthorized);
  EXPECT_EQ((*anonymous)[http::field::content_type], "application/problem+json");
  const auto wrong = Admin("/admin/backends", "not-the-key");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->result(), http::status::unauthorized);

  // The health checks find out which server answers.
  ASSERT_TRUE(Eventually([&] { return ServerUsable(Url(up), true); })) << PoolServer(Url(up));
  ASSERT_TRUE(Eventually([&] { return ServerUsable(Url(down), false); })) << PoolServer(Url(down));

  const auto response = Admin("/admin/backends", kPoolAdminKey);
  ASSERT_TRUE(response);
  ASSERT_EQ(response->result(), http::status::ok) << response->body();
  EXPECT_EQ((*response)[http::field::content_type], "application/json");
  const json::value body = json::parse(response->body());
  const json::array& backends = body.at("backends").as_array();
  ASSERT_EQ(backends.size(), 2u) << body;
  const json::value* pool = nullptr;
  const json::value* files = nullptr;
  for (const json::value& backend : backends) {
    if (backend.at("name") == "pool") pool = &backend;
    if (backend.at("name") == "files") files = &backend;
  }
  ASSERT_NE(pool, nullptr);
  ASSERT_NE(files, nullptr);
  EXPECT_EQ(pool->at("kind"), "http");
  EXPECT_EQ(pool->at("policy"), "least_request");
  EXPECT_EQ(pool->at("limits").at("max_pending").to_number<std::uint64_t>(), 100u);
  EXPECT_EQ(pool->at("health_check").at("path"), "/health");
  ASSERT_EQ(pool->at("servers").as_array().size(), 2u);
  const json::value healthy = PoolServer(Url(up));
  EXPECT_EQ(healthy.at("state"), "healthy");
  EXPECT_TRUE(healthy.at("last_check").at("result").as_string().starts_with("passed")) << healthy;
  EXPECT_FALSE(healthy.at("addresses").as_array().empty()) << healthy;
  const json::value unhealthy = PoolServer(Url(down));
  EXPECT_NE(unhealthy.at("state"), "healthy");
  EXPECT_FALSE(unhealthy.at("reason").is_null()) << unhealthy;
  EXPECT_EQ(files->at("kind"), "filesystem");
  EXPECT_TRUE(files->at("servers").as_array().empty());

  // One backend by name; anything else in the query is a 400 problem.
  const auto one = Admin("/admin/backends?backend=pool", kPoolAdminKey);
  ASSERT_TRUE(one);
  ASSERT_EQ(one->result(), http::status::ok);
  EXPECT_EQ(json::parse(one->body()).at("backends").as_array().size(), 1u);
  const auto unknown = Admin("/admin/backends?verbose=1", kPoolAdminKey);
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->result(), http::status::bad_request);
  EXPECT_EQ((*unknown)[http::field::content_type], "application/problem+json");
  const auto missing = Admin("/admin/backends?backend=nope", kPoolAdminKey);
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->result(), http::status::not_found);
}

TEST_F(BackendPoolAdminTest, ReadyzWaitsForAServerOfEachRequiredRoute) {
  const std::uint16_t port = FreeLoopbackPort();  // its server starts later
  ASSERT_NO_FATAL_FAILURE(StartGateway({port}, true, false));

  ASSERT_TRUE(Eventually([&] { return ServerUsable(Url(port), false); }));
  auto ready = Admin("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->result(), http::status::service_unavailable) << ready->body();
  json::value body = json::parse(ready->body());
  EXPECT_EQ(body.at("status"), "not_ready");
  EXPECT_EQ(body.at("routes_without_server"), json::array({"pool"}));
  // The rest of readiness holds: only the backend is missing.
  EXPECT_EQ(body.at("store_ready"), true);

  ASSERT_NO_FATAL_FAILURE(StartNginx(port));
  ASSERT_TRUE(Eventually([&] { return ServerUsable(Url(port), true); }));
  ready = Admin("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->result(), http::status::ok) << ready->body();
  body = json::parse(ready->body());
  EXPECT_EQ(body.at("status"), "ready");
  EXPECT_TRUE(body.at("routes_without_server").as_array().empty());
}

TEST_F(BackendPoolAdminTest, WithoutRequiredRoutesReadyzIgnoresBackends) {
  const std::uint16_t down = FreeLoopbackPort();
  ASSERT_NO_FATAL_FAILURE(StartGateway({down}, false, false));
  ASSERT_TRUE(Eventually([&] { return ServerUsable(Url(down), false); }));
  const auto ready = Admin("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->result(), http::status::ok) << ready->body();
  EXPECT_FALSE(json::parse(ready->body()).as_object().contains("routes_without_server"));
}

TEST_F(BackendPoolAdminTest, MetricsNameEveryServerOfTheConfiguration) {
  const std::uint16_t up = FreeLoopbackPort();
  const std::uint16_t down = FreeLoopbackPort();
  ASSERT_NO_FATAL_FAILURE(StartNginx(up));
  ASSERT_NO_FATAL_FAILURE(StartGateway({up, down}, false, false));
  ASSERT_TRUE(Eventually([&] { return ServerUsable(Url(down), false); }));
  ASSERT_TRUE(Eventually([&] { return ServerUsable(Url(up), true); }));
  // A request through the pool: it goes to the server that answers.
  const auto response = Fetch(gateway_->traffic_port(), MakeRequest(http::verb::get, "/pool/a"));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->result(), http::status::ok);

  const std::string text = FetchMetricsText(gateway_->admin_port());
  const std::string up_labels = "backend=\"pool\",server=\"" + Url(up) + "\"";
  const std::string down_labels = "backend=\"pool\",server=\"" + Url(down) + "\"";
  EXPECT_EQ(MetricValue(text, "fencegate_backend_server_healthy", up_labels), 1.0) << text;
  EXPECT_EQ(MetricValue(text, "fencegate_backend_server_healthy", down_labels), 0.0);
  EXPECT_GE(
      MetricValue(text, "fencegate_backend_health_checks_total", up_labels + ",result=\"passed\"")
          .value_or(0),
      1.0);
  EXPECT_GE(
      MetricValue(text, "fencegate_backend_health_checks_total", down_labels + ",result=\"failed\"")
          .value_or(0),
      1.0);
  EXPECT_TRUE(MetricValue(text, "fencegate_backend_ejections_total", up_labels).has_value());
  EXPECT_TRUE(MetricValue(text, "fencegate_backend_in_flight", up_labels).has_value());
  EXPECT_TRUE(MetricValue(text, "fencegate_backend_retries_total",
                          "backend=\"pool\",reason=\"connect_failed\"")
                  .has_value());
  EXPECT_TRUE(MetricValue(text, "fencegate_backend_overload_refusals_total",
                          "backend=\"pool\",limit=\"max_pending\"")
                  .has_value());
  EXPECT_TRUE(
      MetricValue(text, "fencegate_backend_no_healthy_total", "backend=\"pool\"").has_value());
  // Observed when the adapter hands the outcome back, which may follow the response's last byte.
  EXPECT_TRUE(Eventually([&] {
    return MetricValue(FetchMetricsText(gateway_->admin_port()),
                       "fencegate_backend_upstream_duration_seconds_count",
                       "route=\"pool\",backend=\"pool\"") == 1.0;
  }));
  // The filesystem backend has no servers, hence no server series.
  EXPECT_EQ(text.find("backend=\"files\""), std::string::npos);
}

TEST_F(BackendPoolAdminTest, CheckConfigReportsTheNewKeysByFileLineAndKey) {
  const std::string file = dir_.WriteFile("bad.yaml",
                                          "backends:\n"
                                          "  pool:\n"
                                          "    kind: http\n"
                                          "    servers:\n"
                                          "      - http://127.0.0.1:1\n"
                                          "      - {url: http://127.0.0.1:2, weight: 0}\n"
                                          "    policy: sticky\n"
                                          "    health_check: {expected_status: 700}\n"
                                          "routes:\n"
                                          "  - name: pool\n"
                                          "    prefix: /pool/\n"
                                          "    backend: pool\n"
                                          "    fence_key: \"pool:{path}\"\n"
                                          "    required: yes-please\n");
  const Finished bad = RunFencegate({"--check-config", file});
  EXPECT_NE(bad.status, 0);
  for (const std::string& expected :
       {file + ":6:43: backends.pool.servers[1].weight: must be between 1 and 1000",
        file + ":7:13: backends.pool.policy: expected 'round_robin', 'least_request' or "
               "'fence_key'; got 'sticky'",
        file + ":8:37: backends.pool.health_check.expected_status:",
        file + ":14:15: routes[0].required:"}) {
    EXPECT_NE(bad.stderr_text.find(expected), std::string::npos)
        << "missing: " << expected << "\nin:\n"
        << bad.stderr_text;
  }

  const std::string good = dir_.WriteFile("good.yaml",
                                          "backends:\n"
                                          "  pool:\n"
                                          "    kind: http\n"
                                          "    servers: [http://127.0.0.1:1, http://127.0.0.1:2]\n"
                                          "    policy: fence_key\n"
                                          "    health_check: {path: /health, interval: 2s}\n"
                                          "    outlier: {consecutive_failures: 3}\n"
                                          "    limits: {max_connections: 10, max_pending: 10}\n"
                                          "    resolve_interval: 0s\n"
                                          "routes:\n"
                                          "  - name: pool\n"
                                          "    prefix: /pool/\n"
                                          "    backend: pool\n"
                                          "    fence_key: \"pool:{path}\"\n"
                                          "    required: true\n");
  const Finished ok = RunFencegate({"--check-config", good});
  EXPECT_EQ(ok.status, 0) << ok.stderr_text;
}

}  // namespace
}  // namespace fencegate::integration
