#include <algorithm>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/fencegate_run.h"
#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/process.h"
#include "tests/support/recording_backend.h"
#include "tests/support/temp_dir.h"

namespace fencegate::integration {
namespace {

using ::testing::HasSubstr;

TEST(CliTest, CheckConfigAcceptsTheShippedConfigs) {
  // deploy/fencegate.yaml: the Debian package's /etc/fencegate/fencegate.yaml.
  for (const char* relative : {"/config/fencegate.yaml", "/config/examples/full-reference.yaml",
                               "/config/examples/http-backend.yaml", "/deploy/fencegate.yaml"}) {
    const std::string path = std::string(FENCEGATE_SOURCE_DIR) + relative;
    Finished finished = RunFencegate({"--check-config", path});
    EXPECT_EQ(finished.status, 0) << finished.stderr_text;
    EXPECT_THAT(finished.stdout_text, HasSubstr(path + ": OK"));
  }
}

// The configuration is literal text: an unknown key and the errors' lines in it are asserted.
TEST(CliTest, CheckConfigReportsEveryErrorWithItsLine) {
  TempDir dir;
  const std::string path = dir.WriteFile("bad.yaml",
                                         "listen: 127.0.0.1:8080\n"
                                         "timeouts:\n"
                                         "  idle: forever\n"  // line 3
                                         "backends:\n"
                                         "  api: {kind: http, url: \"http://127.0.0.1:1\"}\n"
                                         "routes:\n"
                                         "  - name: a\n"
                                         "    prefix: /a/\n"
                                         "    backend: api\n"
                                         "    fence_kee: \"a\"\n");  // line 10
  Finished finished = RunFencegate({"--check-config", path});
  EXPECT_EQ(finished.status, 1);
  EXPECT_THAT(finished.stderr_text, HasSubstr(path + ":3:9: timeouts.idle: "));
  EXPECT_THAT(finished.stderr_text, HasSubstr(path + ":10:5: routes[0].fence_kee: unknown key"));
}

// A recursive alias used to crash the process (stack overflow in the first walk of the tree).
TEST(CliTest, CheckConfigRefusesARecursiveAlias) {
  TempDir dir;
  const std::string path = dir.WriteFile("loop.yaml",
                                         "listen: 127.0.0.1:8080\n"
                                         "backends: &loop\n"  // line 2, the anchor at column 11
                                         "  api: {kind: http, url: \"http://127.0.0.1:1\"}\n"
                                         "  again: *loop\n");
  Finished finished = RunFencegate({"--check-config", path});
  EXPECT_EQ(finished.status, 1) << finished.stderr_text;
  EXPECT_THAT(finished.stderr_text, HasSubstr(path + ":2:11: an alias refers to a node"));
}

// Every file the gateway reads at start is opened by --check-config, and one it cannot read is
// a configuration error at the key's line and column, as start would otherwise fail on it.
TEST(CliTest, CheckConfigNamesEveryFileThatCannotBeRead) {
  TempDir dir;
  const std::string missing = dir.Join("missing");
  const std::string directory = dir.path();  // opens, but is no file
  struct FileKey {
    std::string key;
    std::string file;
  };
  const std::vector<FileKey> keys = {
      {"tls.traffic.cert_file", missing + "/traffic.pem"},
      {"tls.traffic.key_file", missing + "/traffic.key"},
      {"tls.traffic.client_ca_file", missing + "/traffic-ca.pem"},
      {"tls.admin.cert_file", missing + "/admin.pem"},
      {"tls.admin.key_file", directory},
      {"tls.admin.client_ca_file", missing + "/admin-ca.pem"},
      {"store.tls.ca_file", missing + "/etcd-ca.pem"},
      {"store.tls.client_cert_file", missing + "/etcd-client.pem"},
      {"store.tls.client_key_file", missing + "/etcd-client.key"},
      {"backends.api.tls_ca_file", missing + "/api-ca.pem"},
      {"backends.api.tls_client_cert_file", missing + "/api-client.pem"},
      {"backends.api.tls_client_key_file", missing + "/api-client.key"},
      {"backends.dav.tls_ca_file", missing + "/dav-ca.pem"},
      {"backends.objects.tls_ca_file", missing + "/s3-ca.pem"},
      {"backends.objects.secret_key_file", missing + "/s3-secret"},
      {"routes[0].verify_tokens.etcd.tls.ca_file", missing + "/verify-ca.pem"},
      {"locks.signing.keys[0].secret_file", missing + "/signing.key"},
  };
  GatewayConfig config;
  config["tls"]["traffic"] = TlsListener(keys[0].file, keys[1].file);
  config["tls"]["traffic"]["client_ca_file"] = keys[2].file;
  config["tls"]["admin"] = TlsListener(keys[3].file, keys[4].file);
  config["tls"]["admin"]["client_ca_file"] = keys[5].file;
  config["store"]["kind"] = "etcd";
  config["store"]["endpoints"] = Sequence({"127.0.0.1:2379"});
  config["store"]["tls"]["ca_file"] = keys[6].file;
  config["store"]["tls"]["client_cert_file"] = keys[7].file;
  config["store"]["tls"]["client_key_file"] = keys[8].file;
  YAML::Node api = config.Backend("api");
  api["kind"] = "http";
  api["url"] = "https://127.0.0.1:9443";
  api["tls_ca_file"] = keys[9].file;
  api["tls_client_cert_file"] = keys[10].file;
  api["tls_client_key_file"] = keys[11].file;
  YAML::Node dav = config.Backend("dav");
  dav["kind"] = "webdav";
  dav["url"] = "https://127.0.0.1:9444";
  dav["tls_ca_file"] = keys[12].file;
  YAML::Node objects = config.Backend("objects");
  objects["kind"] = "s3";
  objects["endpoint"] = "https://127.0.0.1:7443";
  objects["access_key"] = "a";
  objects["tls_ca_file"] = keys[13].file;
  objects["secret_key_file"] = keys[14].file;
  YAML::Node api_route = config.Route("api", "/api/", "api", "api:{segment:2}");
  api_route["max_token_advance"] = 1000;
  YAML::Node etcd = api_route["verify_tokens"]["etcd"];
  etcd["endpoints"] = Sequence({"127.0.0.1:2379"});
  etcd["lock_name"] = "api/{segment:2}";
  etcd["tls"]["ca_file"] = keys[15].file;
  config.Route("dav", "/dav/", "dav", "dav:{path}");
  config.Route("objects", "/objects/", "objects", "s3:{path}");
  config["locks"]["signing"]["key_id"] = "k1";
  YAML::Node signing_key;
  signing_key["id"] = "k1";
  signing_key["secret_file"] = keys[16].file;
  config["locks"]["signing"]["keys"].push_back(signing_key);
  const std::string text = config.Yaml();
  const std::string path = dir.WriteFile("files.yaml", text);

  const Finished finished = RunFencegate({"--check-config", path});
  EXPECT_EQ(finished.status, 1) << finished.stderr_text;
  EXPECT_EQ(finished.stdout_text.find(": OK"), std::string::npos);
  for (const FileKey& key : keys) {
    // FILE:LINE:COL of the value as written, then the key.
    const std::size_t value = text.find(": " + key.file + "\n");
    ASSERT_NE(value, std::string::npos) << key.file << " not written plain in\n" << text;
    const std::size_t at = value + 2;
    const std::size_t line_start = text.rfind('\n', at) + 1;
    const std::string where =
        path + ":" + std::to_string(std::count(text.begin(), text.begin() + at, '\n') + 1) + ":" +
        std::to_string(at - line_start + 1) + ": " + key.key + ": cannot read '" + key.file + "'";
    EXPECT_THAT(finished.stderr_text, HasSubstr(where)) << finished.stderr_text;
  }
  EXPECT_THAT(finished.stderr_text, HasSubstr("'" + directory + "': it is a directory"));
}

TEST(CliTest, VersionAndUsageErrors) {
  Finished version = RunFencegate({"--version"});
  EXPECT_EQ(version.status, 0);
  EXPECT_THAT(version.stdout_text, HasSubstr("fencegate"));

  Finished unknown = RunFencegate({"--no-such-option"});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_THAT(unknown.stderr_text, HasSubstr("--no-such-option"));

  Finished missing = RunFencegate({"--config", "/nonexistent/fencegate.yaml"});
  EXPECT_EQ(missing.status, 1);
  EXPECT_THAT(missing.stderr_text, HasSubstr("/nonexistent/fencegate.yaml"));
}

TEST(CliTest, ListenerInUseIsAStartupFailure) {
  TempDir dir;
  RecordingBackend occupant;  // holds a listening socket on its port
  Finished finished =
      RunFencegate({"--config", std::string(FENCEGATE_SOURCE_DIR) + "/config/fencegate.yaml",
                    "--listen", "127.0.0.1:" + std::to_string(occupant.port()), "--admin-listen",
                    "127.0.0.1:0", "--data-dir", dir.Join("data")});
  EXPECT_EQ(finished.status, 3) << finished.stderr_text;
  EXPECT_EQ(finished.stdout_text.find("fencegate listening"), std::string::npos);
}

}  // namespace
}  // namespace fencegate::integration
