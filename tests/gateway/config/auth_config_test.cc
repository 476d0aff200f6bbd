#include <fstream>

#include <gtest/gtest.h>

#include "gateway/auth/api_key.h"
#include "gateway/config/config_loader.h"
#include "tests/gateway/config/config_text.h"

namespace fencegate::gateway {
namespace {

// `printf %s abc | sha256sum`
const std::string kAbc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

const std::string kBackendAndRoute = config_text::kOneFilesRoute;

using config_text::Load;

using config_text::Dump;

TEST(AuthConfigTest, NoAuthSectionsMeansOpen) {
  Config config;
  ASSERT_TRUE(Load(kBackendAndRoute, &config).empty());
  EXPECT_TRUE(config.auth.principals.empty());
  EXPECT_TRUE(config.admin.credentials.principals.empty());
  EXPECT_FALSE(config.admin.metrics_public);
  EXPECT_FALSE(config.routes[0].policy.has_value());
}

TEST(AuthConfigTest, PrincipalsPolicyAndAdmin) {
  Config config;
  const auto errors = Load(kBackendAndRoute +
                               "    policy:\n"
                               "      read: [\"*\"]\n"
                               "      write: [writer]\n"
                               "      advance:\n"
                               "        writer: [\"files:/files/a/\"]\n"
                               "auth:\n"
                               "  principals:\n"
                               "    - name: writer\n"
                               "      api_key_sha256: [" +
                               kAbc +
                               "]\n"
                               "      tls_subjects: [\"CN=writer,O=example\"]\n"
                               "      tls_dns_sans: [writer.example.org]\n"
                               "      tls_uri_sans: [\"spiffe://example.org/writer\"]\n"
                               "admin:\n"
                               "  principals:\n"
                               "    - name: alice\n"
                               "      api_key_sha256: [" +
                               kAbc +
                               "]\n"
                               "  metrics_public: true\n",
                           &config);
  ASSERT_TRUE(errors.empty()) << Dump(errors);
  ASSERT_EQ(config.auth.principals.size(), 1u);
  const auth::PrincipalConfig& writer = config.auth.principals[0];
  EXPECT_EQ(writer.name, "writer");
  ASSERT_EQ(writer.api_key_sha256.size(), 1u);
  EXPECT_TRUE(auth::DigestsEqual(writer.api_key_sha256[0], auth::DigestApiKey("abc")));
  EXPECT_EQ(writer.tls_subjects, std::vector<std::string>{"CN=writer,O=example"});
  EXPECT_EQ(writer.tls_dns_sans, std::vector<std::string>{"writer.example.org"});
  EXPECT_EQ(writer.tls_uri_sans, std::vector<std::string>{"spiffe://example.org/writer"});
  ASSERT_TRUE(config.routes[0].policy.has_value());
  EXPECT_EQ(config.routes[0].policy->read, std::vector<std::string>{"*"});
  EXPECT_EQ(config.routes[0].policy->write, std::vector<std::string>{"writer"});
  EXPECT_EQ(config.routes[0].policy->advance.at("writer"),
            std::vector<std::string>{"files:/files/a/"});
  ASSERT_EQ(config.admin.credentials.principals.size(), 1u);
  EXPECT_EQ(config.admin.credentials.principals[0].name, "alice");
  EXPECT_TRUE(config.admin.metrics_public);
}

TEST(AuthConfigTest, ErrorsNameLineAndKeyAndNeverEchoAKey) {
  Config config;
  const auto errors = Load(kBackendAndRoute +
                               "    policy:\n"                            // 10
                               "      write: [writer, ghost]\n"           // 11
                               "      advance: {nobody: [\"*\"]}\n"       // 12
                               "auth:\n"                                  // 13
                               "  principals:\n"                          // 14
                               "    - name: writer\n"                     // 15
                               "      api_key_sha256: [my-secret-key]\n"  // 16
                               "      tls_subject: x\n",                  // 17
                           &config);
  const std::string text = Dump(errors);
  EXPECT_NE(text.find("test.yaml:11:"), std::string::npos) << text;
  EXPECT_NE(text.find("routes[0].policy.write[1]: no principal named 'ghost'"), std::string::npos)
      << text;
  EXPECT_NE(text.find("test.yaml:12:"), std::string::npos) << text;
  EXPECT_NE(text.find("routes[0].policy.advance.nobody"), std::string::npos) << text;
  EXPECT_NE(text.find("test.yaml:16:"), std::string::npos) << text;
  EXPECT_NE(text.find("auth.principals[0].api_key_sha256: expected the SHA-256"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("my-secret-key"), std::string::npos) << text;
  EXPECT_NE(text.find("test.yaml:17:"), std::string::npos) << text;
  EXPECT_NE(text.find("unknown key 'tls_subject'"), std::string::npos) << text;
}

TEST(AuthConfigTest, TheFullReferenceDocumentsEveryAuthKey) {
  Config config;
  const auto errors = LoadConfigFile(
      std::string(FENCEGATE_SOURCE_DIR) + "/config/examples/full-reference.yaml", &config);
  ASSERT_TRUE(errors.empty()) << Dump(errors);
  ASSERT_EQ(config.auth.principals.size(), 1u);
  EXPECT_TRUE(auth::DigestsEqual(config.auth.principals[0].api_key_sha256.at(0),
                                 auth::DigestApiKey("example-key-do-not-use")));
  const RouteConfig& inventory = config.routes.at(1);
  ASSERT_TRUE(inventory.policy.has_value());
  EXPECT_EQ(inventory.policy->advance.at("inventory-writer"),
            std::vector<std::string>{"inventory:"});
  ASSERT_EQ(config.admin.credentials.principals.size(), 1u);
  EXPECT_TRUE(auth::DigestsEqual(config.admin.credentials.principals[0].api_key_sha256.at(0),
                                 auth::DigestApiKey("example-admin-key-do-not-use")));
}

TEST(AuthConfigTest, LockPolicyLoadsAndItsErrorsNameLineAndKey) {
  const std::string principals =
      "auth:\n"
      "  principals:\n"
      "    - name: worker\n"
      "      api_key_sha256: [" +
      kAbc + "]\n";  // 10-13
  Config config;
  auto errors = Load(kBackendAndRoute + principals +
                         "locks:\n"
                         "  policy:\n"
                         "    read: [\"*\"]\n"
                         "    acquire: {worker: [\"orders-*\", \"jobs\"], \"*\": [\"shared-*\"]}\n",
                     &config);
  ASSERT_TRUE(errors.empty()) << Dump(errors);
  ASSERT_TRUE(config.locks.policy.has_value());
  EXPECT_EQ(config.locks.policy->read, std::vector<std::string>{"*"});
  EXPECT_EQ(config.locks.policy->acquire.at("worker"),
            (std::vector<std::string>{"orders-*", "jobs"}));
  EXPECT_EQ(config.locks.policy->acquire.at("*"), std::vector<std::string>{"shared-*"});

  Config bad;
  errors = Load(kBackendAndRoute + principals +
                    "locks:\n"                        // 14
                    "  policy:\n"                     // 15
                    "    read: [ghost]\n"             // 16
                    "    acquire:\n"                  // 17
                    "      worker: [\"orders/*\"]\n"  // 18
                    "      nobody: [\"x\"]\n"         // 19
                    "    release: [worker]\n",        // 20
                &bad);
  const std::string text = Dump(errors);
  EXPECT_NE(text.find("test.yaml:16:"), std::string::npos) << text;
  EXPECT_NE(text.find("locks.policy.read[0]: no principal named 'ghost'"), std::string::npos)
      << text;
  EXPECT_NE(text.find("test.yaml:18:"), std::string::npos) << text;
  EXPECT_NE(text.find("locks.policy.acquire.worker: a lock-name pattern"), std::string::npos)
      << text;
  EXPECT_NE(text.find("test.yaml:19:"), std::string::npos) << text;
  EXPECT_NE(text.find("locks.policy.acquire.nobody: no principal named 'nobody'"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("test.yaml:20:"), std::string::npos) << text;
  EXPECT_NE(text.find("unknown key 'release'"), std::string::npos) << text;
}

TEST(AuthConfigTest, APolicyNeedsPrincipals) {
  Config config;
  const auto errors = Load(kBackendAndRoute +
                               "    policy:\n"
                               "      read: [\"*\"]\n",
                           &config);
  ASSERT_EQ(errors.size(), 1u) << Dump(errors);
  EXPECT_EQ(errors[0].key, "routes[0].policy");
  EXPECT_EQ(errors[0].line, 11);
}

TEST(AuthConfigTest, KeysFileAddsPrincipalsAndItsErrorsNameItsLines) {
  const std::string path = ::testing::TempDir() + "auth_config_test_keys";
  {
    std::ofstream out(path);
    out << "# name sha256\n"
        << "\n"
        << "reader " << kAbc << "\n"
        << "writer   " << kAbc << "  \n"
        << "broken not-a-digest\n"
        << "alone\n";
  }
  Config config;
  auto errors = Load(kBackendAndRoute + "auth:\n  api_keys_file: " + path + "\n", &config);
  ASSERT_EQ(errors.size(), 2u) << Dump(errors);
  EXPECT_EQ(errors[0].file, path);
  EXPECT_EQ(errors[0].line, 5);
  EXPECT_EQ(errors[0].key, "auth.api_keys_file");
  EXPECT_EQ(errors[1].line, 6);
  EXPECT_EQ(Dump(errors).find("not-a-digest"), std::string::npos);

  {
    std::ofstream out(path);
    out << "reader " << kAbc << "\nwriter " << kAbc << "\n";
  }
  errors = Load(kBackendAndRoute +
                    "    policy: {read: [reader], write: [writer]}\n"
                    "auth:\n  api_keys_file: " +
                    path + "\n",
                &config);
  ASSERT_TRUE(errors.empty()) << Dump(errors);
  ASSERT_EQ(config.auth.principals.size(), 2u);
  EXPECT_EQ(config.auth.principals[0].name, "reader");

  errors = Load(kBackendAndRoute + "auth:\n  api_keys_file: /nonexistent/keys\n", &config);
  ASSERT_EQ(errors.size(), 1u) << Dump(errors);
  EXPECT_EQ(errors[0].line, 11);
  EXPECT_EQ(errors[0].key, "auth.api_keys_file");
}

}  // namespace
}  // namespace fencegate::gateway
