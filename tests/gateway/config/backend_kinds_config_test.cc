// The backend kinds of resource_adapters/registry/registry.h as the configuration reads them: every
// kind has a reader, errors keep their FILE:LINE:COL, and a backend of each kind read from YAML
// builds its adapter factory.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gateway/config/config_loader.h"
#include "resource_adapters/adapter.h"
#include "resource_adapters/registry/registry.h"
#include "tests/gateway/config/config_text.h"

namespace fencegate::gateway {
namespace {

using config_text::Dump;
using config_text::Load;

// Backend `b` with `keys` (each line indented four spaces), and a route to it.
std::string OneBackend(const std::string& keys) {
  return "backends:\n"  // line 1
         "  b:\n" +     // line 2
         keys +         // line 3...
         "routes:\n"
         "  - name: r\n"
         "    prefix: /r/\n"
         "    backend: b\n"
         "    fence_key: \"r:{path}\"\n";
}

std::string KeysOf(const std::string& kind) {
  const std::string root = ::testing::TempDir() + "backend_kinds_root";
  if (kind == "http") return "    kind: http\n    url: http://127.0.0.1:9000\n";
  if (kind == "filesystem") return "    kind: filesystem\n    root: \"" + root + "\"\n";
  if (kind == "webdav") return "    kind: webdav\n    url: http://127.0.0.1:9001\n";
  if (kind == "s3") {
    return "    kind: s3\n    endpoint: http://127.0.0.1:9002\n    access_key: AK\n"
           "    secret_key: SK\n";
  }
  return "";
}

TEST(BackendKindsConfigTest, EveryKindOfTheRegistryIsReadAndBuildsItsFactory) {
  for (const adapters::BackendKindRow& row : adapters::BackendKindRows()) {
    SCOPED_TRACE(std::string(row.name));
    const std::string keys = KeysOf(std::string(row.name));
    ASSERT_FALSE(keys.empty()) << "no sample configuration for this kind in the test";
    Config config;
    const auto errors = Load(OneBackend(keys), &config);
    ASSERT_TRUE(errors.empty()) << Dump(errors);
    const BackendConfig& backend = config.backends.at("b");
    EXPECT_EQ(backend.kind, row.name);
    std::string error;
    std::unique_ptr<adapters::AdapterFactory> factory = row.make_factory(backend, nullptr, &error);
    EXPECT_NE(factory, nullptr) << error;
  }
}

TEST(BackendKindsConfigTest, TheConnectionKeysAreSharedByTheNetworkedKinds) {
  const std::string shared =
      "    connect_timeout: 2s\n    response_timeout: 3s\n    max_idle_connections: 5\n"
      "    idle_timeout: 4s\n";
  for (const std::string kind : {"http", "webdav", "s3"}) {
    SCOPED_TRACE(kind);
    Config config;
    const auto errors = Load(OneBackend(KeysOf(kind) + shared), &config);
    ASSERT_TRUE(errors.empty()) << Dump(errors);
    const BackendConfig& backend = config.backends.at("b");
    const adapters::UpstreamOptions* upstream = adapters::FindBackendKind(kind)->upstream(backend);
    ASSERT_NE(upstream, nullptr);
    EXPECT_EQ(upstream->host, "127.0.0.1");
    EXPECT_EQ(upstream->connect_timeout, std::chrono::milliseconds(2000));
    EXPECT_EQ(upstream->response_timeout, std::chrono::milliseconds(3000));
    EXPECT_EQ(upstream->max_idle_connections, 5u);
    EXPECT_EQ(upstream->idle_timeout, std::chrono::milliseconds(4000));
  }
}

TEST(BackendKindsConfigTest, AnUnknownKindIsNamedAtItsLineAndColumn) {
  Config config;
  const auto errors = Load(OneBackend("    kind: zookeeper\n"), &config);
  ASSERT_EQ(errors.size(), 1u) << Dump(errors);
  EXPECT_EQ(errors[0].ToString(),
            "test.yaml:3:11: backends.b.kind: unknown backend kind 'zookeeper'; expected 'http', "
            "'filesystem', 'webdav' or 's3'");
}

TEST(BackendKindsConfigTest, AMissingKindListsTheKindsAndStillCatchesTypos) {
  Config config;
  const auto errors = Load(OneBackend("    url: http://127.0.0.1:9000\n    rot: /srv\n"), &config);
  ASSERT_EQ(errors.size(), 2u) << Dump(errors);
  EXPECT_EQ(errors[0].ToString(),
            "test.yaml:3:5: backends.b.kind: required: 'http', 'filesystem', 'webdav' or 's3'");
  EXPECT_EQ(errors[1].ToString(),
            "test.yaml:4:5: backends.b.rot: unknown key 'rot'; did you mean 'root'?");
}

TEST(BackendKindsConfigTest, AKeyOfAnotherKindIsUnknown) {
  Config config;
  const auto errors =
      Load(OneBackend("    kind: http\n    url: http://127.0.0.1:9000\n    region: eu\n"), &config);
  ASSERT_EQ(errors.size(), 1u) << Dump(errors);
  EXPECT_EQ(errors[0].ToString(), "test.yaml:5:5: backends.b.region: unknown key 'region'");
}

TEST(BackendKindsConfigTest, TlsKeysNeedAnHttpsAddressNamedAsTheKindNamesIt) {
  const std::string ca = config_text::ReadableFile("backend_kinds_ca.pem");
  Config config;
  auto errors = Load(OneBackend(KeysOf("http") + "    tls_ca_file: \"" + ca + "\"\n"), &config);
  ASSERT_EQ(errors.size(), 1u) << Dump(errors);
  EXPECT_EQ(errors[0].ToString(),
            "test.yaml:4:10: backends.b.url: tls_* keys are set but the url is not https://");
  errors = Load(OneBackend(KeysOf("s3") + "    tls_ca_file: \"" + ca + "\"\n"), &config);
  ASSERT_EQ(errors.size(), 1u) << Dump(errors);
  EXPECT_EQ(errors[0].ToString(),
            "test.yaml:4:15: backends.b.endpoint: tls_* keys are set but the endpoint is not "
            "https://");
}

}  // namespace
}  // namespace fencegate::gateway
