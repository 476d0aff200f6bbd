#include "gateway/config/config_loader.h"

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/gateway/config/config_text.h"

namespace fencegate::gateway {
namespace {

using std::chrono::milliseconds;
// True when `text` contains `part`; reported with both on failure.
::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

std::filesystem::path RepoFile(const std::string& relative) {
  // Not derived from __FILE__: with ccache's CCACHE_BASEDIR that path is relative to the build dir.
  return std::filesystem::path(FENCEGATE_SOURCE_DIR) / relative;
}

const std::string kMinimal = config_text::kOneFilesRoute;

using config_text::Load;

// The single error of `text`, or a test failure.
ConfigError OnlyError(const std::string& text) {
  std::vector<ConfigError> errors = Load(text);
  EXPECT_EQ(errors.size(), 1u);
  if (errors.size() != 1) {
    for (const ConfigError& error : errors) ADD_FAILURE() << "error: " << error.ToString();
  }
  return errors.empty() ? ConfigError{} : errors.front();
}

TEST(ConfigLoaderTest, FullReferenceLoadsWithExactValues) {
  Config config;
  const std::string path = RepoFile("config/examples/full-reference.yaml").string();
  std::vector<ConfigError> errors = LoadConfigFile(path, &config);
  for (const ConfigError& error : errors) ADD_FAILURE() << error.ToString();
  ASSERT_TRUE(errors.empty());

  EXPECT_EQ(config.source_path, path);
  EXPECT_EQ(config.listen.host, "127.0.0.1");
  EXPECT_EQ(config.listen.port, 8080);
  EXPECT_EQ(config.admin_listen.host, "127.0.0.1");
  EXPECT_EQ(config.admin_listen.port, 9901);
  // "../../var", relative to config/examples/: the repository's var/.
  EXPECT_EQ(config.data_dir, RepoFile("var").lexically_normal().string());
  EXPECT_EQ(config.threads, 0u);
  EXPECT_EQ(config.limits.max_header_bytes, 16u * 1024);
  EXPECT_EQ(config.limits.max_body_bytes, 8ull << 30);
  EXPECT_EQ(config.limits.max_connections, 20000u);
  EXPECT_EQ(config.limits.relay_buffer_memory, 1ull << 30);
  EXPECT_EQ(config.limits.headers_with_underscores, UnderscoreAction::kDrop);
  EXPECT_EQ(config.timeouts.header_read, milliseconds(10000));
  EXPECT_EQ(config.timeouts.body_read, milliseconds(30000));
  EXPECT_EQ(config.timeouts.idle, milliseconds(60000));
  EXPECT_EQ(config.timeouts.response_write, milliseconds(30000));
  EXPECT_EQ(config.timeouts.shutdown_drain, milliseconds(15000));
  EXPECT_EQ(config.timeouts.barrier_wait, milliseconds(65000));
  EXPECT_EQ(config.timeouts.write_deadline, milliseconds(60000));
  EXPECT_EQ(config.store.kind, "rocksdb");
  EXPECT_EQ(config.store.path, "");
  EXPECT_EQ(config.store.block_cache_bytes, 32u << 20);
  EXPECT_EQ(config.store.cached_keys, 100000u);
  EXPECT_EQ(config.store.rejection_retention, 10000u);
  EXPECT_EQ(config.access_log.path, "-");

  ASSERT_EQ(config.backends.size(), 4u);
  const BackendConfig& files = config.backends.at("files");
  EXPECT_EQ(files.name, "files");
  EXPECT_EQ(files.kind, "filesystem");
  EXPECT_EQ(files.data_dir_path_as_written, "{data_dir}/files");
  EXPECT_EQ(files.filesystem.root, RepoFile("var/files").lexically_normal().string());
  EXPECT_EQ(files.filesystem.io_threads, 2u);
  EXPECT_TRUE(files.filesystem.sync_writes);
  const BackendConfig& api = config.backends.at("api");
  EXPECT_EQ(api.kind, "http");
  EXPECT_EQ(api.http.host, "127.0.0.1");
  EXPECT_EQ(api.http.port, 9000);
  EXPECT_EQ(api.http.host_header, "");
  EXPECT_EQ(api.http.max_idle_connections, 64u);
  EXPECT_EQ(api.http.connect_timeout, milliseconds(5000));
  EXPECT_EQ(api.http.response_timeout, milliseconds(60000));
  EXPECT_EQ(api.http.idle_timeout, milliseconds(30000));
  EXPECT_EQ(api.http.forward_token_header, "");
  ASSERT_EQ(api.http.balancing.servers.size(), 1u);
  EXPECT_EQ(api.http.balancing.servers[0].url, "http://127.0.0.1:9000");
  EXPECT_EQ(api.http.balancing.policy, adapters::BalancingPolicy::kRoundRobin);
  ASSERT_TRUE(api.http.balancing.health_check.has_value());
  EXPECT_EQ(api.http.balancing.health_check->path, "/");
  EXPECT_EQ(api.http.balancing.health_check->interval, milliseconds(5000));
  EXPECT_EQ(api.http.balancing.health_check->expected_status_max, 399u);
  EXPECT_EQ(api.http.balancing.outlier.max_ejection_time, milliseconds(300000));
  EXPECT_EQ(api.http.balancing.limits.max_pending, 0u);
  EXPECT_EQ(api.http.balancing.resolve_interval, milliseconds(30000));
  const BackendConfig& dav = config.backends.at("dav");
  EXPECT_EQ(dav.kind, "webdav");
  EXPECT_EQ(dav.http.host, "127.0.0.1");
  EXPECT_EQ(dav.http.port, 8081);
  EXPECT_EQ(dav.http.max_idle_connections, 64u);
  EXPECT_EQ(dav.http.idle_timeout, milliseconds(30000));
  EXPECT_EQ(dav.webdav.host, "127.0.0.1");
  EXPECT_EQ(dav.webdav.port, 8081);
  EXPECT_EQ(dav.webdav.host_header, "");
  EXPECT_EQ(dav.webdav.connect_timeout, milliseconds(5000));
  EXPECT_EQ(dav.webdav.response_timeout, milliseconds(60000));
  EXPECT_EQ(dav.webdav.lock_timeout, milliseconds(10000));
  EXPECT_EQ(dav.webdav.lock_attempts, 100u);
  EXPECT_EQ(dav.webdav.lock_retry_delay, milliseconds(10));
  EXPECT_EQ(dav.webdav.conditions.policy, adapters::ConditionProbeOptions::Policy::kVerify);
  EXPECT_EQ(dav.webdav.conditions.prefix, ".fencegate-probe/");
  EXPECT_EQ(dav.webdav.conditions.interval, std::chrono::minutes(10));
  const BackendConfig& objects = config.backends.at("objects");
  EXPECT_EQ(objects.kind, "s3");
  EXPECT_EQ(objects.s3.host, "127.0.0.1");
  EXPECT_EQ(objects.s3.port, 7480);
  EXPECT_EQ(objects.s3.region, "us-east-1");
  EXPECT_EQ(objects.s3.access_key, "EXAMPLEACCESSKEY");
  EXPECT_EQ(objects.s3.secret_key, "example-secret-key");
  EXPECT_EQ(objects.s3.etag_quoting, adapters::EtagQuoting::kAuto);
  EXPECT_EQ(objects.s3.max_spool_bytes, 64u << 20);
  EXPECT_EQ(objects.s3.max_retries, 8u);
  EXPECT_EQ(objects.s3.version_cache_entries, 0u);
  EXPECT_EQ(objects.s3.conditions.policy, adapters::ConditionProbeOptions::Policy::kVerify);
  EXPECT_TRUE(objects.s3.conditions.buckets.empty());
  EXPECT_EQ(objects.s3.connect_timeout, milliseconds(5000));
  EXPECT_EQ(objects.s3.response_timeout, milliseconds(60000));
  EXPECT_EQ(objects.s3.max_idle_connections, 16u);
  EXPECT_EQ(objects.s3.idle_timeout, milliseconds(15000));

  ASSERT_EQ(config.routes.size(), 6u);
  const RouteConfig& files_route = config.routes[0];
  EXPECT_EQ(files_route.name, "files");
  EXPECT_EQ(files_route.prefix, "/files/");
  EXPECT_EQ(files_route.host, "");
  EXPECT_EQ(files_route.backend, "files");
  EXPECT_EQ(files_route.fence_key.source(), "files:{path}");
  EXPECT_EQ(files_route.fenced_methods,
            (std::vector<std::string>{"PUT", "POST", "PATCH", "DELETE"}));
  EXPECT_FALSE(files_route.fence_reads);
  const RouteConfig& inventory = config.routes[1];
  EXPECT_EQ(inventory.name, "inventory");
  EXPECT_EQ(inventory.prefix, "/api/inventory/");
  EXPECT_EQ(inventory.backend, "api");
  std::string key;
  ASSERT_TRUE(inventory.fence_key.Render({"/api/inventory/apple/x", "h", "inventory"}, &key));
  EXPECT_EQ(key, "inventory:apple");
  EXPECT_FALSE(inventory.idempotency.has_value());

  const RouteConfig& orders = config.routes[2];
  EXPECT_EQ(orders.backend, "api");
  ASSERT_TRUE(orders.idempotency.has_value());
  EXPECT_EQ(orders.idempotency->mode, IdempotencyConfig::Mode::kStore);
  EXPECT_FALSE(orders.idempotency->required);
  EXPECT_EQ(orders.idempotency->methods, (std::vector<std::string>{"POST", "PATCH"}));
  EXPECT_EQ(orders.idempotency->header, "Idempotency-Key");
  EXPECT_EQ(orders.idempotency->expire_after, std::chrono::hours(24));
  EXPECT_EQ(orders.idempotency->max_response_bytes, 1u << 20);
  EXPECT_EQ(orders.idempotency->identity_header, "X-Client-Id");
  EXPECT_EQ(orders.idempotency->forward_header, "Idempotency-Key");
  EXPECT_EQ(config.routes[3].name, "share");
  EXPECT_EQ(config.routes[3].backend, "dav");
  EXPECT_EQ(config.routes[4].name, "objects");
  EXPECT_EQ(config.routes[4].backend, "objects");
  ASSERT_TRUE(config.routes[4].fence_key.Render({"/objects/b/k", "h", "objects"}, &key));
  EXPECT_EQ(key, "s3:/objects/b/k");
  const RouteConfig& reports = config.routes[5];
  EXPECT_EQ(reports.max_token_advance, 100000u);
  ASSERT_TRUE(reports.verify_tokens.has_value());
  EXPECT_EQ(reports.verify_tokens->endpoints, std::vector<std::string>{"127.0.0.1:2379"});
  ASSERT_TRUE(
      reports.verify_tokens->lock_name.Render({"/api/reports/q3/summary", "h", "reports"}, &key));
  EXPECT_EQ(key, "reports/q3");
  EXPECT_EQ(reports.verify_tokens->timeout, milliseconds(500));
  EXPECT_FALSE(reports.verify_tokens->tls.has_value());

  ASSERT_TRUE(config.locks.policy.has_value());
  EXPECT_EQ(config.locks.policy->read, std::vector<std::string>{"*"});
  ASSERT_EQ(config.locks.policy->acquire.size(), 1u);
  EXPECT_EQ(config.locks.policy->acquire.at("inventory-writer"),
            std::vector<std::string>{"inventory-*"});
}

TEST(ConfigLoaderTest, ShippedConfigsLoad) {
  for (const char* relative : {"config/fencegate.yaml", "config/examples/http-backend.yaml"}) {
    Config config;
    std::vector<ConfigError> errors = LoadConfigFile(RepoFile(relative).string(), &config);
    for (const ConfigError& error : errors) ADD_FAILURE() << error.ToString();
    EXPECT_FALSE(config.routes.empty()) << relative;
  }
  Config config;
  ASSERT_TRUE(
      LoadConfigFile(RepoFile("config/examples/http-backend.yaml").string(), &config).empty());
  EXPECT_EQ(config.backends.at("api").http.forward_token_header, "Fencing-Token");
}

TEST(ConfigLoaderTest, DefaultsApplyWhenKeysAreAbsent) {
  Config config;
  ASSERT_TRUE(Load(kMinimal, &config).empty());
  const Config defaults;
  EXPECT_EQ(config.listen.port, defaults.listen.port);
  EXPECT_EQ(config.data_dir, ConfigDirectory("test.yaml") + "/var");  // beside the file
  EXPECT_EQ(config.timeouts.barrier_wait, defaults.timeouts.barrier_wait);
  EXPECT_EQ(config.limits.max_body_bytes, defaults.limits.max_body_bytes);
  EXPECT_EQ(config.routes[0].fenced_methods, RouteConfig{}.fenced_methods);
  EXPECT_EQ(config.backends.at("files").filesystem.root, "/srv/files");
  EXPECT_EQ(config.source_path, "test.yaml");
}

TEST(ConfigLoaderTest, DurationAndSizeUnits) {
  Config config;
  ASSERT_TRUE(Load(std::string(kMinimal) + "timeouts:\n"
                                           "  header_read: 250ms\n"
                                           "  body_read: 2m\n"
                                           "  idle: 1h\n"
                                           "  shutdown_drain: 0s\n"
                                           "limits:\n"
                                           "  max_header_bytes: 2048\n"
                                           "  max_body_bytes: 3MB\n"
                                           "store:\n"
                                           "  block_cache: 1MiB\n",
                   &config)
                  .empty());
  EXPECT_EQ(config.timeouts.header_read, milliseconds(250));
  EXPECT_EQ(config.timeouts.body_read, milliseconds(120000));
  EXPECT_EQ(config.timeouts.idle, milliseconds(3600000));
  EXPECT_EQ(config.timeouts.shutdown_drain, milliseconds(0));
  EXPECT_EQ(config.limits.max_header_bytes, 2048u);
  EXPECT_EQ(config.limits.max_body_bytes, 3000000u);
  EXPECT_EQ(config.store.block_cache_bytes, 1u << 20);
}

TEST(ConfigLoaderTest, BadDurationNamesLineColumnAndKey) {
  ConfigError error = OnlyError(std::string(kMinimal) +
                                "timeouts:\n"              // line 10
                                "  idle: 60s\n"            // line 11
                                "  header_read: 10 s\n");  // line 12
  EXPECT_EQ(error.file, "test.yaml");
  EXPECT_EQ(error.line, 12);
  EXPECT_EQ(error.column, 16);
  EXPECT_EQ(error.key, "timeouts.header_read");
  EXPECT_TRUE(Contains(error.message, "'10 s'"));
  EXPECT_EQ(error.ToString().rfind("test.yaml:12:16: timeouts.header_read: ", 0), 0u)
      << error.ToString();
}

TEST(ConfigLoaderTest, BadSizeAndZeroDuration) {
  std::vector<ConfigError> errors = Load(std::string(kMinimal) +
                                         "limits:\n"                    // 10
                                         "  max_body_bytes: 8 GiB\n"    // 11
                                         "  max_header_bytes: 16kib\n"  // 12
                                         "timeouts:\n"                  // 13
                                         "  idle: 0ms\n");              // 14
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].key, "limits.max_body_bytes");
  EXPECT_EQ(errors[0].line, 11);
  EXPECT_EQ(errors[1].key, "limits.max_header_bytes");
  EXPECT_EQ(errors[1].line, 12);
  EXPECT_EQ(errors[2].key, "timeouts.idle");
  EXPECT_EQ(errors[2].line, 14);
  EXPECT_TRUE(Contains(errors[2].message, "greater than zero"));
}

// A key that takes one of a few names says which ones, in the file's order of keys.
TEST(ConfigLoaderTest, ChoicesNameWhatTheyAccept) {
  // Two lines: cert_file and key_file, readable files.
  const std::string files = "    cert_file: " + config_text::ReadableFile("a.pem") +
                            "\n    key_file: " + config_text::ReadableFile("a.key") + "\n";
  std::vector<ConfigError> errors = Load(std::string(kMinimal) +
                                         "tls:\n"                      // 10
                                         "  traffic:\n" +              // 11
                                         files +                       // 12, 13
                                         "    client_auth: maybe\n"    // 14
                                         "    min_version: \"1.1\"\n"  // 15
                                         "  admin:\n" +                // 16
                                         files +                       // 17, 18
                                         "    client_auth: [off]\n");  // 19
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].ToString(),
            "test.yaml:14:18: tls.traffic.client_auth: expected 'off', 'optional' or "
            "'required'; got 'maybe'");
  EXPECT_EQ(errors[1].ToString(),
            "test.yaml:15:18: tls.traffic.min_version: expected '1.2' or '1.3' (older versions "
            "are not offered); got '1.1'");
  EXPECT_EQ(errors[2].ToString(),
            "test.yaml:19:18: tls.admin.client_auth: expected 'off', 'optional' or 'required', "
            "got a list");
}

// The condition probes' keys (docs/BACKEND_TRUST.md): values read, bad ones located.
TEST(ConfigLoaderTest, ConditionProbeKeys) {
  const std::string s3 =
      "backends:\n"
      "  objects:\n"
      "    kind: s3\n"
      "    endpoint: http://127.0.0.1:7480\n"
      "    access_key: a\n"
      "    secret_key: b\n";
  const std::string route =
      "routes:\n"
      "  - {name: a, prefix: /, backend: objects, fence_key: \"k\"}\n";
  Config config;
  const std::vector<ConfigError> none =
      LoadConfigText(s3 +
                         "    conditions: trust\n"
                         "    probe_prefix: probes/fg/\n"
                         "    probe_interval: 90s\n"
                         "    probe_buckets: [photos, logs.2026]\n" +
                         route,
                     "test.yaml", &config);
  ASSERT_TRUE(none.empty()) << none.front().ToString();
  const adapters::ConditionProbeOptions& probes = config.backends.at("objects").s3.conditions;
  EXPECT_EQ(probes.policy, adapters::ConditionProbeOptions::Policy::kTrust);
  EXPECT_EQ(probes.prefix, "probes/fg/");
  EXPECT_EQ(probes.interval, std::chrono::seconds(90));
  EXPECT_EQ(probes.buckets, (std::vector<std::string>{"photos", "logs.2026"}));

  const std::vector<ConfigError> errors = Load(s3 +
                                               "    conditions: maybe\n"            // 7
                                               "    probe_prefix: /abs/\n"          // 8
                                               "    probe_buckets: [ok-name, X]\n"  // 9
                                               + route);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].ToString(),
            "test.yaml:7:17: backends.objects.conditions: expected 'verify' or 'trust'; got "
            "'maybe'");
  EXPECT_EQ(errors[1].key, "backends.objects.probe_prefix");
  EXPECT_EQ(errors[1].line, 8);
  EXPECT_EQ(errors[2].key, "backends.objects.probe_buckets[1]");
  EXPECT_TRUE(Contains(errors[2].message, "not an S3 bucket name"));

  // probe_buckets is an s3 key: a webdav backend does not know it.
  const ConfigError webdav = OnlyError(
      "backends:\n"
      "  dav:\n"
      "    kind: webdav\n"
      "    url: http://127.0.0.1:8081\n"
      "    conditions: verify\n"
      "    probe_buckets: [a]\n"  // line 6
      "routes:\n"
      "  - {name: a, prefix: /, backend: dav, fence_key: \"k\"}\n");
  EXPECT_EQ(webdav.line, 6);
  EXPECT_EQ(webdav.key, "backends.dav.probe_buckets");
}

TEST(ConfigLoaderTest, HeadersWithUnderscoresIsAChoice) {
  Config config;
  ASSERT_TRUE(LoadConfigText(std::string(kMinimal) + "limits:\n"
                                                     "  headers_with_underscores: reject\n",
                             "test.yaml", &config)
                  .empty());
  EXPECT_EQ(config.limits.headers_with_underscores, UnderscoreAction::kReject);
  std::vector<ConfigError> errors = Load(std::string(kMinimal) +
                                         "limits:\n"                               // 10
                                         "  headers_with_underscores: ignore\n");  // 11
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].ToString(),
            "test.yaml:11:29: limits.headers_with_underscores: expected 'drop', 'reject' or "
            "'allow'; got 'ignore'");
}

TEST(ConfigLoaderTest, UnknownKeyIsAnErrorWithSuggestion) {
  ConfigError error = OnlyError("listne: 127.0.0.1:1\n" + std::string(kMinimal));
  EXPECT_EQ(error.line, 1);
  EXPECT_EQ(error.column, 1);
  EXPECT_EQ(error.key, "listne");
  EXPECT_EQ(error.message, "unknown key 'listne'; did you mean 'listen'?");

  ConfigError nested = OnlyError(std::string(kMinimal) + "    fence_reeds: true\n");
  EXPECT_EQ(nested.line, 10);
  EXPECT_EQ(nested.key, "routes[0].fence_reeds");
  EXPECT_TRUE(Contains(nested.message, "did you mean 'fence_reads'?"));

  ConfigError far = OnlyError(std::string(kMinimal) + "colour: blue\n");
  EXPECT_EQ(far.message, "unknown key 'colour'");
}

TEST(ConfigLoaderTest, KeyOfTheOtherBackendKindIsUnknown) {
  ConfigError error = OnlyError(
      "backends:\n"
      "  files:\n"
      "    kind: filesystem\n"
      "    root: /srv\n"
      "    url: http://127.0.0.1:1\n"  // line 5
      "routes:\n"
      "  - {name: a, prefix: /, backend: files, fence_key: \"k\"}\n");
  EXPECT_EQ(error.line, 5);
  EXPECT_EQ(error.key, "backends.files.url");
}

// Errors come sorted by position, whatever order they were found in.
TEST(ConfigLoaderTest, CollectsEveryError) {
  std::vector<ConfigError> errors = Load(
      "listen: 127.0.0.1\n"                          // 1: no port
      "admin_listen: nowhere:99999\n"                // 2: bad host
      "store:\n"                                     // 3
      "  kind: zookeeper\n"                          // 4: unsupported
      "backends:\n"                                  // 5
      "  api:\n"                                     // 6
      "    kind: http\n"                             // 7
      "    url: ftp://10.0.0.1:443\n"                // 8: scheme
      "  disk:\n"                                    // 9
      "    kind: filesystem\n"                       // 10: no root
      "routes:\n"                                    // 11
      "  - name: a\n"                                // 12
      "    prefix: a/\n"                             // 13: no leading slash
      "    backend: nope\n"                          // 14: no such backend
      "    fence_key: \"a:{bogus}\"\n"               // 15: bad template
      "    fenced_methods: [PUT, \"BAD METHOD\"]\n"  // 16: not a token
      "  - name: a\n"                                // 17: duplicate name
      "    prefix: /b/\n"                            // 18
      "    backend: api\n"                           // 19
      "    fence_key: \"b\"\n");                     // 20
  std::vector<std::pair<int, std::string>> where;
  for (const ConfigError& error : errors) where.emplace_back(error.line, error.key);
  std::vector<std::pair<int, std::string>> expected = {
      {1, "listen"},
      {2, "admin_listen"},
      {4, "store.kind"},
      {8, "backends.api.url"},
      {10, "backends.disk.root"},
      {13, "routes[0].prefix"},
      {14, "routes[0].backend"},
      {15, "routes[0].fence_key"},
      {16, "routes[0].fenced_methods[1]"},
      {17, "routes[1].name"},
  };
  EXPECT_EQ(where, expected);
  for (const ConfigError& error : errors) {
    EXPECT_EQ(error.file, "test.yaml");
    if (error.key == "backends.api.url") {
      EXPECT_TRUE(Contains(error.message, "unsupported scheme 'ftp'"));
    }
    if (error.key == "routes[1].name") {
      EXPECT_TRUE(Contains(error.message, "line 12"));
    }
    if (error.key == "routes[0].fence_key") {
      EXPECT_TRUE(Contains(error.message, "{bogus}"));
    }
  }
}

TEST(ConfigLoaderTest, MissingRequiredKeysAndRoutes) {
  std::vector<ConfigError> errors = Load(
      "backends:\n"
      "  files: {kind: filesystem, root: /srv}\n"
      "routes:\n"
      "  - name: a\n"  // line 4: prefix, backend and fence_key missing
      "    host: example.com\n");
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].key, "routes[0].prefix");
  EXPECT_EQ(errors[1].key, "routes[0].backend");
  EXPECT_EQ(errors[2].key, "routes[0].fence_key");
  for (const ConfigError& error : errors) EXPECT_EQ(error.line, 4);

  ConfigError no_routes = OnlyError("backends: {}\n");
  EXPECT_EQ(no_routes.key, "routes");
  ConfigError empty_routes = OnlyError("routes: []\n");
  EXPECT_EQ(empty_routes.key, "routes");
  EXPECT_TRUE(Contains(empty_routes.message, "at least one route"));
  ConfigError empty_file = OnlyError("");
  EXPECT_EQ(empty_file.key, "routes");
}

TEST(ConfigLoaderTest, BackendUrlForms) {
  auto url_error = [](const std::string& url) {
    std::vector<ConfigError> errors = Load(
        "backends:\n"
        "  api: {kind: http, url: \"" +
        url +
        "\"}\n"
        "routes:\n"
        "  - {name: a, prefix: /, backend: api, fence_key: \"k\"}\n");
    return errors.empty() ? std::string() : errors.front().message;
  };
  EXPECT_EQ(url_error("http://127.0.0.1:9000"), "");
  EXPECT_EQ(url_error("http://backend.internal:81/"), "");
  EXPECT_EQ(url_error("http://[::1]:9000"), "");
  EXPECT_EQ(url_error("https://127.0.0.1:9000"), "");  // TLS (README "Transport (TLS)")
  EXPECT_TRUE(Contains(url_error("127.0.0.1:9000"), "http://HOST:PORT"));
  EXPECT_TRUE(Contains(url_error("http://127.0.0.1:9000/api"), "no path"));
  EXPECT_TRUE(Contains(url_error("http://127.0.0.1:0"), "port"));
  EXPECT_TRUE(Contains(url_error("http://:80"), "no host"));

  Config config;
  ASSERT_TRUE(Load("backends:\n"
                   "  api: {kind: http, url: \"http://[::1]:9000/\"}\n"
                   "routes:\n"
                   "  - {name: a, prefix: /, backend: api, fence_key: \"k\"}\n",
                   &config)
                  .empty());
  EXPECT_EQ(config.backends.at("api").http.host, "::1");
  EXPECT_EQ(config.backends.at("api").http.port, 9000);
}

TEST(ConfigLoaderTest, YamlSyntaxErrorIsLocated) {
  ConfigError error = OnlyError(
      "listen: 127.0.0.1:1\n"
      "routes: [\n"
      "  {name: a\n");
  EXPECT_EQ(error.file, "test.yaml");
  EXPECT_GT(error.line, 0);
  EXPECT_FALSE(error.message.empty());
}

TEST(ConfigLoaderTest, WrongShapesAreReportedNotThrown) {
  std::vector<ConfigError> errors = Load(
      "listen: [1, 2]\n"
      "limits: 5\n"
      "threads: many\n"
      "routes:\n"
      "  name: a\n");
  std::vector<std::string> keys;
  for (const ConfigError& error : errors) keys.push_back(error.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"listen", "limits", "threads", "routes"}));
}

TEST(ConfigLoaderTest, DuplicateKeyIsAnError) {
  ConfigError error =
      OnlyError("listen: 127.0.0.1:1\nlisten: 127.0.0.1:2\n" + std::string(kMinimal));
  EXPECT_EQ(error.line, 2);
  EXPECT_EQ(error.key, "listen");
  EXPECT_TRUE(Contains(error.message, "duplicate"));
}

// An alias inside the node it names makes a cycle; every reader would recurse until the stack
// ran out (the fuzzer's find: the gateway died of a segfault on this file).
TEST(ConfigLoaderTest, RecursiveAliasIsAnErrorNotACrash) {
  ConfigError error = OnlyError("!: &x\nroutes: *x\n");
  EXPECT_EQ(error.file, "test.yaml");
  EXPECT_TRUE(Contains(error.message, "recursive anchor"));

  error = OnlyError(kMinimal + "limits: &loop\n  nested: [1, *loop]\n");
  EXPECT_EQ(error.line, 10);
  EXPECT_TRUE(Contains(error.message, "recursive anchor"));
}

// Aliases of aliases: ten levels of ten make 10^10 nodes from a dozen lines.
TEST(ConfigLoaderTest, AliasExpansionIsBounded) {
  std::string text = kMinimal + "x0: &a0 [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n";
  for (int level = 1; level < 10; ++level) {
    const std::string previous = "*a" + std::to_string(level - 1);
    text += "x" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < 10; ++i) text += (i ? ", " : "") + previous;
    text += "]\n";
  }
  const ConfigError error = OnlyError(text);
  EXPECT_TRUE(Contains(error.message, "aliases expand the document"));
}

// Anchors that only share a block (the common use) still load.
TEST(ConfigLoaderTest, SharedAnchorsStillLoad) {
  Config config;
  const std::vector<ConfigError> errors = Load(
      "backends:\n"
      "  files: &filesystem\n"
      "    kind: filesystem\n"
      "    root: /srv/files\n"
      "  more_files: *filesystem\n"
      "routes:\n"
      "  - {name: a, prefix: /a/, backend: files, fence_key: \"a:{path}\"}\n"
      "  - {name: b, prefix: /b/, backend: more_files, fence_key: \"b:{path}\"}\n",
      &config);
  ASSERT_TRUE(errors.empty()) << config_text::Dump(errors);
  EXPECT_EQ(config.backends.size(), 2u);
  EXPECT_EQ(config.routes.size(), 2u);
}

TEST(ConfigLoaderTest, DataDirTokenExpandsInFilesystemRoot) {
  Config config;
  ASSERT_TRUE(Load("data_dir: /state\n"
                   "backends:\n"
                   "  files: {kind: filesystem, root: \"{data_dir}/files\"}\n"
                   "  fixed: {kind: filesystem, root: /srv/fixed}\n"
                   "routes:\n"
                   "  - {name: a, prefix: /, backend: files, fence_key: \"k\"}\n",
                   &config)
                  .empty());
  EXPECT_EQ(config.backends.at("files").filesystem.root, "/state/files");
  EXPECT_EQ(config.backends.at("fixed").filesystem.root, "/srv/fixed");

  config.data_dir = "/other";
  ExpandDataDirInPaths(&config);
  EXPECT_EQ(config.backends.at("files").filesystem.root, "/other/files");
  EXPECT_EQ(config.backends.at("fixed").filesystem.root, "/srv/fixed");
}

TEST(ConfigLoaderTest, MissingFileIsAnError) {
  Config config;
  std::vector<ConfigError> errors = LoadConfigFile("/nonexistent/fencegate.yaml", &config);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].file, "/nonexistent/fencegate.yaml");
  EXPECT_EQ(errors[0].ToString(), "/nonexistent/fencegate.yaml: cannot open the file");
}

}  // namespace
}  // namespace fencegate::gateway
