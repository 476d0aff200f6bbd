// Several servers per backend as the configuration reads them (docs/UPSTREAMS.md): `servers` or
// `url`/`endpoint`, policy, health_check, outlier, limits, resolve_interval, routes' `required`;
// every mistake reported as FILE:LINE:COL: KEY: message.
#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gateway/config/config_diff.h"
#include "gateway/config/config_loader.h"
#include "tests/gateway/config/config_text.h"

namespace fencegate::gateway {
namespace {

using config_text::Dump;
using config_text::Load;
using std::chrono::milliseconds;

// Backend `b` of `kind` with `keys` (each line indented four spaces, from line 4), and a route.
std::string Backend(const std::string& kind, const std::string& keys) {
  std::string text =
      "backends:\n"  // line 1
      "  b:\n"       // line 2
      "    kind: " +
      kind + "\n" +  // line 3
      keys;          // line 4...
  if (kind == "s3") text += "    access_key: AK\n    secret_key: SK\n";
  return text +
         "routes:\n"
         "  - name: r\n"
         "    prefix: /r/\n"
         "    backend: b\n"
         "    fence_key: \"r:{path}\"\n";
}

// The one error of loading `text`, as FILE:LINE:COL: KEY: message.
std::string OnlyErrorLine(const std::string& text) {
  Config config;
  const std::vector<ConfigError> errors = Load(text, &config);
  if (errors.size() != 1) return "expected one error, got: " + Dump(errors);
  return errors[0].ToString();
}

TEST(BalancingConfigTest, ServersAsUrlsOrWithWeightsFillTheBalancingOptions) {
  Config config;
  const auto errors = Load(Backend("http",
                                   "    servers:\n"
                                   "      - http://10.0.0.1:9000\n"
                                   "      - {url: \"http://10.0.0.2\", weight: 3}\n"
                                   "      - url: http://backend-c.internal:9002/\n"
                                   "        weight: 1000\n"
                                   "    policy: fence_key\n"),
                           &config);
  ASSERT_TRUE(errors.empty()) << Dump(errors);
  const adapters::UpstreamOptions& http = config.backends.at("b").http;
  ASSERT_EQ(http.balancing.servers.size(), 3u);
  EXPECT_EQ(http.balancing.servers[0].url, "http://10.0.0.1:9000");
  EXPECT_EQ(http.balancing.servers[0].host, "10.0.0.1");
  EXPECT_EQ(http.balancing.servers[0].port, 9000);
  EXPECT_EQ(http.balancing.servers[0].weight, 1u);
  EXPECT_EQ(http.balancing.servers[1].host, "10.0.0.2");
  EXPECT_EQ(http.balancing.servers[1].port, 80);
  EXPECT_EQ(http.balancing.servers[1].weight, 3u);
  EXPECT_EQ(http.balancing.servers[2].url, "http://backend-c.internal:9002/");
  EXPECT_EQ(http.balancing.servers[2].host, "backend-c.internal");
  EXPECT_EQ(http.balancing.servers[2].weight, 1000u);
  EXPECT_EQ(http.balancing.policy, adapters::BalancingPolicy::kFenceKey);
  // The one-server fields name the first server; the backend's name is its metrics label.
  EXPECT_EQ(http.host, "10.0.0.1");
  EXPECT_EQ(http.port, 9000);
  EXPECT_EQ(http.backend_name, "b");
  // Defaults.
  EXPECT_FALSE(http.balancing.health_check.has_value());
  EXPECT_EQ(http.balancing.resolve_interval, milliseconds(30000));
}

TEST(BalancingConfigTest, OneUrlIsOneServerForEveryNetworkedKind) {
  for (const std::string kind : {"http", "webdav", "s3"}) {
    SCOPED_TRACE(kind);
    Config config;
    const std::string key = kind == "s3" ? "endpoint" : "url";
    const auto errors =
        Load(Backend(kind, "    " + key + ": https://store.internal:8443\n"), &config);
    ASSERT_TRUE(errors.empty()) << Dump(errors);
    const BackendConfig& backend = config.backends.at("b");
    const adapters::UpstreamOptions& upstream =
        kind == "s3" ? static_cast<const adapters::UpstreamOptions&>(backend.s3) : backend.http;
    ASSERT_EQ(upstream.balancing.servers.size(), 1u);
    EXPECT_EQ(upstream.balancing.servers[0].url, "https://store.internal:8443");
    EXPECT_TRUE(upstream.balancing.servers[0].tls);
    EXPECT_EQ(upstream.balancing.servers[0].port, 8443);
    EXPECT_EQ(upstream.balancing.servers[0].weight, 1u);
    EXPECT_TRUE(upstream.tls);
    ASSERT_NE(BackendBalancing(backend), nullptr);
    EXPECT_EQ(BackendBalancing(backend)->servers.size(), 1u);
    if (kind == "webdav") {
      EXPECT_EQ(backend.webdav.balancing.servers.size(), 1u);
    }
  }
}

TEST(BalancingConfigTest, S3TakesServersInsteadOfEndpoint) {
  Config config;
  const auto errors = Load(Backend("s3",
                                   "    servers: [http://10.0.0.1:7480, http://10.0.0.2:7480]\n"
                                   "    policy: least_request\n"),
                           &config);
  ASSERT_TRUE(errors.empty()) << Dump(errors);
  EXPECT_EQ(config.backends.at("b").s3.balancing.servers.size(), 2u);
  EXPECT_EQ(config.backends.at("b").s3.balancing.policy, adapters::BalancingPolicy::kLeastRequest);
}

TEST(BalancingConfigTest, EveryKeyIsReadWithItsUnits) {
  Config config;
  const auto errors = Load(Backend("webdav",
                                   "    servers: [http://10.0.0.1:8081]\n"
                                   "    policy: round_robin\n"
                                   "    health_check:\n"
                                   "      path: /healthz?deep=1\n"
                                   "      interval: 2s\n"
                                   "      timeout: 500ms\n"
                                   "      healthy_threshold: 1\n"
                                   "      unhealthy_threshold: 4\n"
                                   "      expected_status: 204\n"
                                   "    outlier:\n"
                                   "      consecutive_failures: 3\n"
                                   "      base_ejection_time: 10s\n"
                                   "      max_ejection_time: 2m\n"
                                   "      max_ejected_percent: 100\n"
                                   "    limits: {max_connections: 200, max_pending: 50}\n"
                                   "    resolve_interval: 0s\n"),
                           &config);
  ASSERT_TRUE(errors.empty()) << Dump(errors);
  // The lock sequence's connections see the same servers as the passthrough.
  for (const adapters::UpstreamOptions* upstream :
       {static_cast<const adapters::UpstreamOptions*>(&config.backends.at("b").http),
        static_cast<const adapters::UpstreamOptions*>(&config.backends.at("b").webdav)}) {
    const adapters::BalancingOptions& b = upstream->balancing;
    ASSERT_TRUE(b.health_check.has_value());
    EXPECT_EQ(b.health_check->path, "/healthz?deep=1");
    EXPECT_EQ(b.health_check->interval, milliseconds(2000));
    EXPECT_EQ(b.health_check->timeout, milliseconds(500));
    EXPECT_EQ(b.health_check->healthy_threshold, 1u);
    EXPECT_EQ(b.health_check->unhealthy_threshold, 4u);
    EXPECT_EQ(b.health_check->expected_status_min, 204u);
    EXPECT_EQ(b.health_check->expected_status_max, 204u);
    EXPECT_EQ(b.outlier.consecutive_failures, 3u);
    EXPECT_EQ(b.outlier.base_ejection_time, milliseconds(10000));
    EXPECT_EQ(b.outlier.max_ejection_time, milliseconds(120000));
    EXPECT_EQ(b.outlier.max_ejected_percent, 100u);
    EXPECT_EQ(b.limits.max_connections, 200u);
    EXPECT_EQ(b.limits.max_pending, 50u);
    EXPECT_EQ(b.resolve_interval, milliseconds(0));
  }
}

TEST(BalancingConfigTest, AnEmptyHealthCheckMappingTakesTheDefaults) {
  Config config;
  const auto errors =
      Load(Backend("http", "    url: http://10.0.0.1\n    health_check: {}\n"), &config);
  ASSERT_TRUE(errors.empty()) << Dump(errors);
  const auto& check = config.backends.at("b").http.balancing.health_check;
  ASSERT_TRUE(check.has_value());
  EXPECT_EQ(check->path, "/");
  EXPECT_EQ(check->expected_status_min, 200u);
  EXPECT_EQ(check->expected_status_max, 399u);
}

TEST(BalancingConfigTest, UrlAndServersAreExclusiveAndOneIsRequired) {
  EXPECT_EQ(OnlyErrorLine(Backend("http", "    url: http://a:1\n    servers: [http://b:1]\n")),
            "test.yaml:5:14: backends.b.servers: give either url (one server) or servers "
            "(several), not both");
  EXPECT_EQ(OnlyErrorLine(Backend("s3", "    endpoint: http://a:1\n    servers: [http://b:1]\n")),
            "test.yaml:5:14: backends.b.servers: give either endpoint (one server) or servers "
            "(several), not both");
  EXPECT_EQ(OnlyErrorLine(Backend("http", "    policy: round_robin\n")),
            "test.yaml:3:5: backends.b.url: required for an http backend (or servers: a list)");
}

TEST(BalancingConfigTest, ServersMustBeANonEmptyListOfUrls) {
  EXPECT_EQ(OnlyErrorLine(Backend("http", "    servers: []\n")),
            "test.yaml:4:14: backends.b.servers: expected a non-empty list of servers (a url, or "
            "{url, weight} each)");
  EXPECT_EQ(OnlyErrorLine(Backend("http", "    servers: http://a:1\n")),
            "test.yaml:4:14: backends.b.servers: expected a non-empty list of servers (a url, or "
            "{url, weight} each)");
  EXPECT_EQ(OnlyErrorLine(Backend("http", "    servers: [ftp://a:1]\n")),
            "test.yaml:4:15: backends.b.servers[0]: unsupported scheme 'ftp'; expected "
            "http://HOST:PORT or https://HOST:PORT");
  EXPECT_EQ(OnlyErrorLine(Backend("http", "    servers: [\"\"]\n")),
            "test.yaml:4:15: backends.b.servers[0]: must not be empty");
  EXPECT_EQ(OnlyErrorLine(Backend("http", "    servers: [http://a:1/base]\n")),
            "test.yaml:4:15: backends.b.servers[0]: a backend url has no path, query or fragment "
            "(the client's path is forwarded unchanged); got '/base'");
  EXPECT_EQ(OnlyErrorLine(Backend("http", "    servers: [http://a:1, http://a:1]\n")),
            "test.yaml:4:27: backends.b.servers[1]: the server 'http://a:1' is listed twice");
  EXPECT_EQ(OnlyErrorLine(Backend("http", "    servers: [http://a:1, https://b:1]\n")),
            "test.yaml:4:27: backends.b.servers[1]: all servers of a backend use one scheme (the "
            "tls_* keys apply to all); the first is http");
}

TEST(BalancingConfigTest, AServerMappingHasAUrlAndAWeightFrom1To1000) {
  EXPECT_EQ(OnlyErrorLine(Backend("http", "    servers: [{weight: 2}]\n")),
            "test.yaml:4:15: backends.b.servers[0].url: required for each server");
  EXPECT_EQ(OnlyErrorLine(Backend("http", "    servers: [{url: http://a:1, weight: 0}]\n")),
            "test.yaml:4:41: backends.b.servers[0].weight: must be between 1 and 1000");
  EXPECT_EQ(OnlyErrorLine(Backend("http", "    servers: [{url: http://a:1, weight: 1001}]\n")),
            "test.yaml:4:41: backends.b.servers[0].weight: must be between 1 and 1000");
  EXPECT_EQ(OnlyErrorLine(Backend("http", "    servers: [{url: http://a:1, wieght: 2}]\n")),
            "test.yaml:4:33: backends.b.servers[0].wieght: unknown key 'wieght'; did you mean "
            "'weight'?");
  EXPECT_EQ(OnlyErrorLine(Backend("http", "    servers: [{url: \"http://a:x\"}]\n")),
            "test.yaml:4:21: backends.b.servers[0].url: invalid port 'x' (expected 1..65535)");
}

TEST(BalancingConfigTest, TlsKeysNeedHttpsServers) {
  const std::string ca = config_text::ReadableFile("balancing_ca.pem");
  EXPECT_EQ(OnlyErrorLine(
                Backend("http", "    servers: [http://a:1]\n    tls_ca_file: \"" + ca + "\"\n")),
            "test.yaml:4:14: backends.b.servers: tls_* keys are set but the servers are not "
            "https://");
  Config config;
  const auto errors = Load(
      Backend("http", "    servers: [https://a:1, https://b:2]\n    tls_ca_file: \"" + ca + "\"\n"),
      &config);
  EXPECT_TRUE(errors.empty()) << Dump(errors);
}

TEST(BalancingConfigTest, PolicyIsOneOfThree) {
  EXPECT_EQ(OnlyErrorLine(Backend("http", "    url: http://a:1\n    policy: random\n")),
            "test.yaml:5:13: backends.b.policy: expected 'round_robin', 'least_request' or "
            "'fence_key'; got 'random'");
}

TEST(BalancingConfigTest, HealthCheckKeysAreChecked) {
  const auto check = [](const std::string& lines) {
    return OnlyErrorLine(Backend("http", "    url: http://a:1\n    health_check:\n" + lines));
  };
  EXPECT_EQ(check("      path: healthz\n"),
            "test.yaml:6:13: backends.b.health_check.path: must be a request target starting "
            "with '/' (no spaces or '#'), got 'healthz'");
  EXPECT_EQ(check("      interval: 0s\n"),
            "test.yaml:6:17: backends.b.health_check.interval: must be greater than zero");
  EXPECT_EQ(check("      timeout: soon\n"),
            "test.yaml:6:16: backends.b.health_check.timeout: expected a duration such as 250ms, "
            "10s, 2m or 1h (units ms, s, m, h), got 'soon'");
  EXPECT_EQ(check("      healthy_threshold: 0\n"),
            "test.yaml:6:26: backends.b.health_check.healthy_threshold: must be between 1 and "
            "1000");
  EXPECT_EQ(check("      unhealthy_threshold: 1001\n"),
            "test.yaml:6:28: backends.b.health_check.unhealthy_threshold: must be between 1 and "
            "1000");
  EXPECT_EQ(check("      expected_status: 99\n"),
            "test.yaml:6:24: backends.b.health_check.expected_status: expected a status (100 to "
            "599) such as 200 or a range such as 200-399, got '99'");
  EXPECT_EQ(check("      expected_status: 399-200\n"),
            "test.yaml:6:24: backends.b.health_check.expected_status: expected a status (100 to "
            "599) such as 200 or a range such as 200-399, got '399-200'");
  EXPECT_EQ(check("      intervall: 1s\n"),
            "test.yaml:6:7: backends.b.health_check.intervall: unknown key 'intervall'; did you "
            "mean 'interval'?");
  EXPECT_EQ(OnlyErrorLine(Backend("http", "    url: http://a:1\n    health_check: yes\n")),
            "test.yaml:5:19: backends.b.health_check: expected a mapping of keys to values");
  Config config;
  const auto errors =
      Load(Backend("http", "    url: http://a:1\n    health_check: {expected_status: 200-299}\n"),
           &config);
  ASSERT_TRUE(errors.empty()) << Dump(errors);
  EXPECT_EQ(config.backends.at("b").http.balancing.health_check->expected_status_min, 200u);
  EXPECT_EQ(config.backends.at("b").http.balancing.health_check->expected_status_max, 299u);
}

TEST(BalancingConfigTest, OutlierKeysAreChecked) {
  const auto outlier = [](const std::string& lines) {
    return OnlyErrorLine(Backend("http", "    url: http://a:1\n    outlier:\n" + lines));
  };
  EXPECT_EQ(outlier("      consecutive_failures: 0\n"),
            "test.yaml:6:29: backends.b.outlier.consecutive_failures: must be between 1 and "
            "100000");
  EXPECT_EQ(outlier("      base_ejection_time: 0ms\n"),
            "test.yaml:6:27: backends.b.outlier.base_ejection_time: must be greater than zero");
  EXPECT_EQ(outlier("      base_ejection_time: 1m\n      max_ejection_time: 30s\n"),
            "test.yaml:7:26: backends.b.outlier.max_ejection_time: must not be shorter than "
            "base_ejection_time");
  // The default max_ejection_time (5m) is shorter than this base: reported at the mapping.
  EXPECT_EQ(outlier("      base_ejection_time: 10m\n"),
            "test.yaml:6:7: backends.b.outlier.max_ejection_time: must not be shorter than "
            "base_ejection_time");
  EXPECT_EQ(outlier("      max_ejected_percent: 101\n"),
            "test.yaml:6:28: backends.b.outlier.max_ejected_percent: must be between 0 and 100");
}

TEST(BalancingConfigTest, LimitsAndResolveIntervalAreChecked) {
  EXPECT_EQ(OnlyErrorLine(Backend("http", "    url: http://a:1\n    limits: {max_pending: -1}\n")),
            "test.yaml:5:27: backends.b.limits.max_pending: expected a whole number, got '-1'");
  EXPECT_EQ(
      OnlyErrorLine(Backend("http", "    url: http://a:1\n    limits: {max_conections: 1}\n")),
      "test.yaml:5:14: backends.b.limits.max_conections: unknown key 'max_conections'; did "
      "you mean 'max_connections'?");
  EXPECT_EQ(OnlyErrorLine(Backend("http", "    url: http://a:1\n    resolve_interval: often\n")),
            "test.yaml:5:23: backends.b.resolve_interval: expected a duration such as 250ms, 10s, "
            "2m or 1h (units ms, s, m, h), got 'often'");
}

TEST(BalancingConfigTest, AFilesystemBackendHasNoServers) {
  const std::string root = ::testing::TempDir() + "balancing_root";
  EXPECT_EQ(OnlyErrorLine(
                Backend("filesystem", "    root: \"" + root + "\"\n    servers: [http://a:1]\n")),
            "test.yaml:5:5: backends.b.servers: unknown key 'servers'");
  Config config;
  const auto errors = Load(Backend("filesystem", "    root: \"" + root + "\"\n"), &config);
  ASSERT_TRUE(errors.empty()) << Dump(errors);
  EXPECT_EQ(BackendBalancing(config.backends.at("b")), nullptr);
}

TEST(BalancingConfigTest, ARouteMayBeRequired) {
  std::string text = Backend("http", "    url: http://a:1\n") + "    required: true\n";
  Config config;
  auto errors = Load(text, &config);
  ASSERT_TRUE(errors.empty()) << Dump(errors);
  EXPECT_TRUE(config.routes[0].required);
  errors = Load(Backend("http", "    url: http://a:1\n"), &config);
  ASSERT_TRUE(errors.empty()) << Dump(errors);
  EXPECT_FALSE(config.routes[0].required);
  EXPECT_EQ(OnlyErrorLine(Backend("http", "    url: http://a:1\n") + "    required: maybe\n"),
            "test.yaml:10:15: routes[0].required: expected true or false, got 'maybe'");
}

// A reload rebuilds a backend whose servers or balancing changed (README "Reloading").
TEST(BalancingConfigTest, AChangedServerListOrBalancingIsAChangedBackend) {
  const std::string before_text = Backend("http", "    servers: [http://a:1, http://b:1]\n");
  Config before;
  ASSERT_TRUE(Load(before_text, &before).empty());
  for (const std::string& keys :
       {std::string("    servers: [http://a:1, http://b:1, http://c:1]\n"),
        std::string("    servers: [http://a:1, {url: http://b:1, weight: 2}]\n"),
        std::string("    servers: [http://a:1, http://b:1]\n    policy: fence_key\n"),
        std::string("    servers: [http://a:1, http://b:1]\n    health_check: {interval: 1s}\n"),
        std::string(
            "    servers: [http://a:1, http://b:1]\n    outlier: {consecutive_failures: 2}\n"),
        std::string("    servers: [http://a:1, http://b:1]\n    limits: {max_pending: 9}\n"),
        std::string("    servers: [http://a:1, http://b:1]\n    resolve_interval: 0s\n")}) {
    SCOPED_TRACE(keys);
    const std::string after_text = Backend("http", keys);
    Config after;
    ASSERT_TRUE(Load(after_text, &after).empty());
    const ConfigDiff diff = DiffConfigs(before, before_text, after, after_text);
    EXPECT_EQ(diff.backends.changed, std::vector<std::string>{"b"});
    EXPECT_TRUE(diff.restart_required.empty());
  }
  const std::string required_text =
      Backend("http", "    servers: [http://a:1, http://b:1]\n") + "    required: true\n";
  Config required;
  ASSERT_TRUE(Load(required_text, &required).empty());
  const ConfigDiff diff = DiffConfigs(before, before_text, required, required_text);
  EXPECT_EQ(diff.routes.changed, std::vector<std::string>{"r"});
  EXPECT_TRUE(diff.backends.empty());
}

}  // namespace
}  // namespace fencegate::gateway
