#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gateway/config/config_loader.h"
#include "tests/gateway/config/config_text.h"

namespace fencegate::gateway {
namespace {

using config_text::Dump;
using config_text::Load;
using config_text::ReadableFile;

// An s3 backend at `endpoint` with `tls_keys` (4-space indented lines) from line 6 on.
std::string S3Config(const std::string& endpoint, const std::string& tls_keys) {
  return "backends:\n"          // line 1
         "  objects:\n"         // line 2
         "    kind: s3\n"       // line 3
         "    access_key: a\n"  // line 4
         "    endpoint: " +
         endpoint + "\n" +  // line 5
         tls_keys +         // line 6...
         "    secret_key: b\n"
         "routes:\n"
         "  - name: objects\n"
         "    prefix: /\n"
         "    backend: objects\n"
         "    fence_key: \"s3:{path}\"\n";
}

TEST(S3TlsConfigTest, HttpsEndpointTakesTheHttpBackendsTlsKeys) {
  Config config;
  const auto errors =
      Load(S3Config("https://rgw.internal:8443", "    tls_ca_file: " + ReadableFile("ca.pem") +
                                                     "\n"
                                                     "    tls_server_name: s3.internal\n"
                                                     "    tls_verify_hostname: false\n"
                                                     "    tls_client_cert_file: " +
                                                     ReadableFile("gw.pem") +
                                                     "\n"
                                                     "    tls_client_key_file: " +
                                                     ReadableFile("gw.key") + "\n"),
           &config);
  ASSERT_TRUE(errors.empty()) << Dump(errors);
  const adapters::S3AdapterOptions& s3 = config.backends.at("objects").s3;
  EXPECT_TRUE(s3.tls);
  EXPECT_EQ(s3.host, "rgw.internal");
  EXPECT_EQ(s3.port, 8443);
  EXPECT_EQ(s3.tls_options.ca_file, ReadableFile("ca.pem"));
  EXPECT_EQ(s3.tls_options.server_name, "s3.internal");
  EXPECT_FALSE(s3.tls_options.verify_hostname);
  EXPECT_EQ(s3.tls_options.client_cert_file, ReadableFile("gw.pem"));
  EXPECT_EQ(s3.tls_options.client_key_file, ReadableFile("gw.key"));
}

TEST(S3TlsConfigTest, HttpsEndpointDefaultsToPort443AndTheSystemStore) {
  Config config;
  const auto errors = Load(S3Config("https://s3.example.org", ""), &config);
  ASSERT_TRUE(errors.empty()) << Dump(errors);
  const adapters::S3AdapterOptions& s3 = config.backends.at("objects").s3;
  EXPECT_TRUE(s3.tls);
  EXPECT_EQ(s3.port, 443);
  EXPECT_TRUE(s3.tls_options.ca_file.empty());
  EXPECT_TRUE(s3.tls_options.verify_hostname);

  const auto plain = Load(S3Config("http://127.0.0.1:7480", ""), &config);
  ASSERT_TRUE(plain.empty()) << Dump(plain);
  EXPECT_FALSE(config.backends.at("objects").s3.tls);
}

TEST(S3TlsConfigTest, TlsKeysOnAPlainEndpointAreRefusedAtTheEndpoint) {
  Config config;
  const auto errors =
      Load(S3Config("http://127.0.0.1:7480", "    tls_ca_file: " + ReadableFile("ca.pem") + "\n"),
           &config);
  ASSERT_EQ(errors.size(), 1u) << Dump(errors);
  EXPECT_EQ(errors[0].file, "test.yaml");
  EXPECT_EQ(errors[0].line, 5);
  EXPECT_EQ(errors[0].key, "backends.objects.endpoint");
  EXPECT_NE(errors[0].message.find("not https://"), std::string::npos) << Dump(errors);
}

TEST(S3TlsConfigTest, BadTlsKeysAreNamedWithFileLineAndKey) {
  Config config;
  const auto errors = Load(S3Config("https://127.0.0.1:7443",
                                    "    tls_client_cert_file: " + ReadableFile("gw.pem") +
                                        "\n"                                    // line 6
                                        "    tls_verify_hostname: sometimes\n"  // line 7
                                        "    tls_verify: false\n"),             // line 8
                           &config);
  ASSERT_EQ(errors.size(), 3u) << Dump(errors);
  std::vector<std::string> keys;
  for (const ConfigError& error : errors) {
    EXPECT_EQ(error.file, "test.yaml");
    keys.push_back(error.key + "@" + std::to_string(error.line));
  }
  std::sort(keys.begin(), keys.end());
  // The key without its partner is reported at the backend's mapping (its first key, line 3);
  // the others where written.
  EXPECT_EQ(keys, (std::vector<std::string>{"backends.objects.tls_client_key_file@3",
                                            "backends.objects.tls_verify@8",
                                            "backends.objects.tls_verify_hostname@7"}))
      << Dump(errors);
}

}  // namespace
}  // namespace fencegate::gateway
