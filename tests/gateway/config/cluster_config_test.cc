// The `cluster:` section (several replicas, README "Running several replicas").
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gateway/config/config_loader.h"
#include "tests/gateway/config/config_text.h"

namespace fencegate::gateway {
namespace {

using std::chrono::milliseconds;

const char kEtcdReplica[] =
    "store:\n"                                              // line 1
    "  kind: etcd\n"                                        // line 2
    "  endpoints: [\"127.0.0.1:2379\"]\n"                   // line 3
    "locks:\n"                                              // line 4
    "  enabled: false\n"                                    // line 5
    "backends:\n"                                           // line 6
    "  api:\n"                                              // line 7
    "    kind: http\n"                                      // line 8
    "    url: http://127.0.0.1:9000\n"                      // line 9
    "    response_timeout: 5s\n"                            // line 10
    "routes:\n"                                             // line 11
    "  - name: kv\n"                                        // line 12
    "    prefix: /kv/\n"                                    // line 13
    "    backend: api\n"                                    // line 14
    "    fence_key: \"kv:{segment:2}\"\n"                   // line 15
    "cluster:\n"                                            // line 16
    "  name: a\n"                                           // line 17
    "  peers: {a: \"127.0.0.1:1\", b: \"127.0.0.1:2\"}\n";  // line 18

std::vector<ConfigError> Load(const std::string& text, Config* config = nullptr) {
  Config scratch;
  return LoadConfigText(text, "test.yaml", config != nullptr ? config : &scratch);
}

TEST(ClusterConfigTest, ExampleReplicaLoadsWithExactValues) {
  Config config;
  const std::string path =
      (std::filesystem::path(FENCEGATE_SOURCE_DIR) / "config/examples/replica.yaml").string();
  std::vector<ConfigError> errors = LoadConfigFile(path, &config);
  for (const ConfigError& error : errors) ADD_FAILURE() << error.ToString();
  ASSERT_TRUE(errors.empty());
  EXPECT_TRUE(config.cluster.enabled);
  EXPECT_EQ(config.cluster.name, "r1");
  EXPECT_EQ(config.cluster.shards, 16u);
  EXPECT_EQ(config.cluster.lease_ttl, milliseconds(3000));
  EXPECT_EQ(config.cluster.quarantine, milliseconds(33000));
  EXPECT_EQ(config.cluster.peers,
            (std::map<std::string, std::string>{
                {"r1", "127.0.0.1:8081"}, {"r2", "127.0.0.1:8082"}, {"r3", "127.0.0.1:8083"}}));
}

TEST(ClusterConfigTest, DefaultsAndDefaultQuarantine) {
  Config config;
  ASSERT_TRUE(Load(kEtcdReplica, &config).empty());
  EXPECT_TRUE(config.cluster.enabled);
  EXPECT_EQ(config.cluster.shards, 16u);
  EXPECT_EQ(config.cluster.lease_ttl, milliseconds(3000));
  // lease_ttl + the longest backend response_timeout.
  EXPECT_EQ(config.cluster.quarantine, milliseconds(8000));
  Config without;
  std::string text = kEtcdReplica;
  ASSERT_TRUE(Load(text.substr(0, text.find("cluster:")), &without).empty());
  EXPECT_FALSE(without.cluster.enabled);
}

TEST(ClusterConfigTest, NeedsStoreKindEtcd) {
  std::string text = kEtcdReplica;
  text.replace(text.find("  kind: etcd\n  endpoints: [\"127.0.0.1:2379\"]\n"),
               std::string("  kind: etcd\n  endpoints: [\"127.0.0.1:2379\"]\n").size(),
               "  kind: rocksdb\n");
  text.replace(text.find("locks:\n  enabled: false\n"), 24, "");
  std::vector<ConfigError> errors = Load(text);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key, "cluster");
  EXPECT_EQ(errors[0].file, "test.yaml");
  EXPECT_NE(errors[0].message.find("store kind 'etcd'"), std::string::npos);
}

TEST(ClusterConfigTest, BadKeysNameFileLineAndKey) {
  std::vector<ConfigError> errors = Load(std::string(kEtcdReplica) +
                                         "  shards: 0\n"          // line 19
                                         "  lease_ttl: 1500ms\n"  // line 20
                                         "  quarantine: 2s\n"     // line 21
                                         "  colour: red\n");      // line 22
  ASSERT_EQ(errors.size(), 4u);                                   // in file order
  EXPECT_EQ(errors[0].key, "cluster.shards");
  EXPECT_EQ(errors[0].line, 19);
  EXPECT_EQ(errors[1].key, "cluster.lease_ttl");
  EXPECT_EQ(errors[1].line, 20);
  EXPECT_NE(errors[1].message.find("whole seconds"), std::string::npos);
  EXPECT_EQ(errors[2].key, "cluster.quarantine");
  EXPECT_EQ(errors[2].line, 21);
  EXPECT_NE(errors[2].message.find("6500ms"), std::string::npos) << errors[2].message;
  EXPECT_EQ(errors[3].key, "cluster.colour");
  EXPECT_EQ(errors[3].line, 22);
  EXPECT_EQ(errors[3].file, "test.yaml");
}

TEST(ClusterConfigTest, NameMustBeAPeerAndPeersNeedAddresses) {
  std::string text = kEtcdReplica;
  text.replace(text.find("name: a"), 7, "name: c");
  text.replace(text.find("b: \"127.0.0.1:2\""), 16, "b: \"nowhere\"");
  std::vector<ConfigError> errors = Load(text);
  ASSERT_EQ(errors.size(), 2u);  // in file order
  EXPECT_EQ(errors[0].key, "cluster.name");
  EXPECT_EQ(errors[0].line, 17);
  EXPECT_EQ(errors[1].key, "cluster.peers.b");
  EXPECT_EQ(errors[1].line, 18);
}

// tls.traffic (line 19 on, after cluster: and any cluster.tls lines), optionally asking
// clients for certificates.
std::string TrafficTls(bool client_auth_required = false) {
  std::string text = "tls:\n  traffic:\n    cert_file: " + config_text::ReadableFile("server.pem") +
                     "\n    key_file: " + config_text::ReadableFile("server.key") + "\n";
  if (client_auth_required) {
    text += "    client_ca_file: " + config_text::ReadableFile("ca.pem") +
            "\n    client_auth: required\n";
  }
  return text;
}

TEST(ClusterConfigTest, TlsTrafficForwardsOverClusterTls) {
  Config config;
  const std::vector<ConfigError> errors =
      Load(std::string(kEtcdReplica) + "  tls:\n" +                            // line 19
               "    ca_file: " + config_text::ReadableFile("ca.pem") + "\n" +  // line 20
               "    server_name: replica.internal\n" +                         // line 21
               "    client_cert_file: " + config_text::ReadableFile("dual.pem") + "\n" +
               "    client_key_file: " + config_text::ReadableFile("dual.key") + "\n" +
               TrafficTls(/*client_auth_required=*/true),
           &config);
  for (const ConfigError& error : errors) ADD_FAILURE() << error.ToString();
  ASSERT_TRUE(config.cluster.tls.has_value());
  EXPECT_EQ(config.cluster.tls->ca_file, config_text::ReadableFile("ca.pem"));
  EXPECT_EQ(config.cluster.tls->server_name, "replica.internal");
  EXPECT_TRUE(config.cluster.tls->verify_hostname);
  EXPECT_EQ(config.cluster.tls->client_cert_file, config_text::ReadableFile("dual.pem"));
  EXPECT_EQ(config.cluster.tls->client_key_file, config_text::ReadableFile("dual.key"));
  // An empty mapping trusts the system store, as store.tls does.
  Config system_store;
  ASSERT_TRUE(
      Load(std::string(kEtcdReplica) + "  tls: {}\n" + TrafficTls(), &system_store).empty());
  ASSERT_TRUE(system_store.cluster.tls.has_value());
  EXPECT_TRUE(system_store.cluster.tls->ca_file.empty());
  // A plain traffic listener, plain forwarding.
  Config plain;
  ASSERT_TRUE(Load(kEtcdReplica, &plain).empty());
  EXPECT_FALSE(plain.cluster.tls.has_value());
}

TEST(ClusterConfigTest, TlsTrafficWithoutClusterTlsIsAnError) {
  const std::vector<ConfigError> errors = Load(std::string(kEtcdReplica) + TrafficTls());
  ASSERT_EQ(errors.size(), 1u) << config_text::Dump(errors);
  EXPECT_EQ(errors[0].file, "test.yaml");
  EXPECT_EQ(errors[0].key, "cluster.tls");
  EXPECT_EQ(errors[0].line, 17);  // the cluster mapping, at its first key
  EXPECT_NE(errors[0].message.find("required when tls.traffic is set"), std::string::npos)
      << errors[0].message;
}

TEST(ClusterConfigTest, ClusterTlsWithPlainTrafficIsAnError) {
  const std::vector<ConfigError> errors =
      Load(std::string(kEtcdReplica) + "  tls:\n" +                        // line 19
           "    ca_file: " + config_text::ReadableFile("ca.pem") + "\n");  // line 20
  ASSERT_EQ(errors.size(), 1u) << config_text::Dump(errors);
  EXPECT_EQ(errors[0].file, "test.yaml");
  EXPECT_EQ(errors[0].key, "cluster.tls");
  EXPECT_EQ(errors[0].line, 20);  // the tls mapping, at its first key
  EXPECT_NE(errors[0].message.find("plain HTTP"), std::string::npos) << errors[0].message;
}

TEST(ClusterConfigTest, ClusterTlsBadKeysNameFileLineAndKey) {
  // Client certificates required by the peers' listener, none configured; an unknown key.
  std::vector<ConfigError> errors =
      Load(std::string(kEtcdReplica) + "  tls:\n" +                        // line 19
           "    ca_file: " + config_text::ReadableFile("ca.pem") + "\n" +  // line 20
           TrafficTls(/*client_auth_required=*/true));
  ASSERT_EQ(errors.size(), 1u) << config_text::Dump(errors);
  EXPECT_EQ(errors[0].key, "cluster.tls.client_cert_file");
  EXPECT_EQ(errors[0].line, 20);
  EXPECT_NE(errors[0].message.find("client_auth is required"), std::string::npos)
      << errors[0].message;
  errors = Load(std::string(kEtcdReplica) + "  tls:\n" +                        // line 19
                "    ca_file: " + config_text::ReadableFile("ca.pem") + "\n" +  // line 20
                "    colour: red\n" +                                           // line 21
                TrafficTls());
  ASSERT_EQ(errors.size(), 1u) << config_text::Dump(errors);
  EXPECT_EQ(errors[0].key, "cluster.tls.colour");
  EXPECT_EQ(errors[0].line, 21);
  errors = Load(std::string(kEtcdReplica) + "  tls:\n" +           // line 19
                "    client_cert_file: /nonexistent/peer.pem\n" +  // line 20
                "    client_key_file: /nonexistent/peer.key\n" +   // line 21
                TrafficTls());
  ASSERT_EQ(errors.size(), 2u) << config_text::Dump(errors);
  EXPECT_EQ(errors[0].key, "cluster.tls.client_cert_file");
  EXPECT_EQ(errors[0].line, 20);
  EXPECT_EQ(errors[1].key, "cluster.tls.client_key_file");
  EXPECT_EQ(errors[1].line, 21);
}

}  // namespace
}  // namespace fencegate::gateway
