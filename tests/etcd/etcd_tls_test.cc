// TLS from the gateway to etcd (`store: {kind: etcd, tls: {...}}`): a real etcd serving HTTPS
// with client certificate auth, certificates made by the openssl CLI at test time
// (tests/support/make_test_certs.sh). A trusted member takes the fences; a wrong CA, a name the
// certificate does not carry, or no client certificate are refused (503, counted), and turning
// name verification off works and is logged.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <optional>
#include <utility>

#include "lockstore/etcd/etcd_async_client.h"
#include "lockstore/etcd/etcd_client.h"
#include "tests/etcd/etcd_cluster.h"
#include "tests/support/admin_client.h"
#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/recording_backend.h"
#include "tests/support/temp_dir.h"

namespace fencegate::etcdtest {
namespace {

using integration::Fetch;
using integration::GatewayInstance;
using integration::MakeRequest;
using integration::http::verb;

class EtcdTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    auto script = integration::Process::Start(
        {"/bin/bash", FENCEGATE_SOURCE_DIR "/tests/support/make_test_certs.sh", certs_}, &error);
    ASSERT_NE(script, nullptr) << error;
    ASSERT_EQ(script->Wait(std::chrono::seconds(60)), 0) << script->Stderr();
    EtcdTls tls;
    tls.cert_file = Cert("dual.pem");
    tls.key_file = Cert("dual.key");
    tls.client_ca_file = Cert("ca.pem");
    tls.probe = {.ca_file = Cert("ca.pem"),
                 .cert_file = Cert("client.pem"),
                 .key_file = Cert("client.key"),
                 .server_name = "localhost"};
    cluster_ = EtcdCluster::Start(1, &error, &tls);
    ASSERT_NE(cluster_, nullptr) << error;
  }

  std::string Cert(const std::string& name) const { return certs_ + "/" + name; }

  // The configuration of a gateway on the etcd store, its store section's tls: `tls`.
  integration::GatewayConfig EtcdStoreConfig(const std::string& name, const YAML::Node& tls) {
    auto config =
        integration::GatewayConfig::HttpBackend(backend_.port(), dir_.Join(name + ".access.log"));
    YAML::Node store = config["store"];
    store["kind"] = "etcd";
    store["prefix"] = "/gw/";
    store["request_timeout"] = "1s";
    store["operation_timeout"] = "2s";
    store["endpoints"].push_back(cluster_->endpoints()[0]);
    store["tls"] = tls;
    config["locks"]["enabled"] = false;
    return config;
  }

  std::unique_ptr<GatewayInstance> StartGateway(const std::string& name, const YAML::Node& tls) {
    std::string error;
    auto gateway = GatewayInstance::Start(
        dir_.WriteFile(name + ".yaml", EtcdStoreConfig(name, tls).Yaml()), dir_.Join(name), &error);
    EXPECT_NE(gateway, nullptr) << error;
    return gateway;
  }

  // Starts a gateway on `tls` to etcd and expects start-up to fail (exit 3) with `cause` in its
  // error.
  void ExpectStartRefused(const std::string& name, const YAML::Node& tls,
                          const std::string& cause) {
    auto refused = EtcdStoreConfig(name, tls);
    // The refusal must come from a handshake that finished (the cause names the certificate), not
    // from one cut by a timeout on a busy machine: generous bounds here.
    refused["store"]["request_timeout"] = "5s";
    refused["store"]["operation_timeout"] = "8s";
    const std::string config = dir_.WriteFile(name + ".yaml", refused.Yaml());
    std::string error;
    auto start = integration::Process::Start(
        {integration::FencegateBinary(), "--config", config, "--listen", "127.0.0.1:0",
         "--admin-listen", "127.0.0.1:0", "--data-dir", dir_.Join(name)},
        &error);
    ASSERT_NE(start, nullptr) << error;
    EXPECT_EQ(start->Wait(std::chrono::seconds(60)), 3) << name;
    ASSERT_TRUE(start->WaitForOutputEnd(std::chrono::seconds(30)));
    EXPECT_NE(start->Stderr().find("start-up failed"), std::string::npos) << start->Stderr();
    EXPECT_NE(start->Stderr().find(cause), std::string::npos) << name << ": " << start->Stderr();
  }

  // The CA that signed etcd's certificate, and a client certificate it accepts.
  YAML::Node TrustedTls() const { return ClientTls(Cert("ca.pem")); }
  YAML::Node ClientTls(const std::string& ca_file) const {
    YAML::Node tls;
    tls["ca_file"] = ca_file;
    tls["client_cert_file"] = Cert("client.pem");
    tls["client_key_file"] = Cert("client.key");
    return tls;
  }

  static integration::Response Put(std::uint16_t port, const std::string& path,
                                   const std::string& token) {
    std::string error;
    const auto response =
        Fetch(port, MakeRequest(verb::put, path, {{"Fencing-Token", token}}, "v"), &error);
    if (!response) {
      ADD_FAILURE() << error;
      return integration::Response();
    }
    return *response;
  }

  static double TlsFailures(const GatewayInstance& gateway) {
    return integration::MetricValue(integration::FetchMetricsText(gateway.admin_port()),
                                    "fencegate_store_tls_failures_total", "")
        .value_or(-1);
  }

  integration::TempDir dir_;
  const std::string certs_ = dir_.Join("certs");
  integration::RecordingBackend backend_;
  std::unique_ptr<EtcdCluster> cluster_;
};

TEST_F(EtcdTlsTest, TrustedMemberTakesTheFencesOverMutualTls) {
  auto gateway = StartGateway("good", TrustedTls());
  ASSERT_NE(gateway, nullptr);
  EXPECT_EQ(Put(gateway->traffic_port(), "/kv/doc/x", "5").result_int(), 200u);
  EXPECT_EQ(Put(gateway->traffic_port(), "/kv/doc/x", "4").result_int(), 409u);
  EXPECT_EQ(backend_.Requests().size(), 1u);
  EXPECT_EQ(TlsFailures(*gateway), 0);

  // The fence is in etcd: read back over TLS with the store's own client.
  lockstore::etcd::EtcdClientOptions options;
  options.endpoints = cluster_->endpoints();
  options.tls.emplace();
  options.tls->ca_file = Cert("ca.pem");
  options.tls->client_cert_file = Cert("client.pem");
  options.tls->client_key_file = Cert("client.key");
  std::string error;
  options.tls_context = tls_client::BuildClientContext(*options.tls, &error);
  ASSERT_NE(options.tls_context, nullptr) << error;
  lockstore::etcd::EtcdClient client(options,
                                     std::make_shared<lockstore::etcd::EtcdClientCounters>());
  std::vector<lockstore::etcd::EtcdKeyValue> kvs;
  ASSERT_TRUE(client.GetPrefix("/gw/", &kvs).ok());
  const lockstore::etcd::EtcdKeyValue* fence = nullptr;
  for (const auto& kv : kvs) {
    if (kv.key.find("kv:doc") != std::string::npos) fence = &kv;
  }
  ASSERT_NE(fence, nullptr) << kvs.size() << " keys under /gw/";

  // And with the asynchronous client the store's advances use, over its own TLS connections.
  auto counters = std::make_shared<lockstore::etcd::EtcdClientCounters>();
  lockstore::etcd::EtcdAsyncClient async(options, counters, 2);
  std::promise<std::pair<lockstore::Status, std::optional<lockstore::etcd::EtcdKeyValue>>> read;
  async.Get(fence->key,
            [&read](lockstore::Status status, std::optional<lockstore::etcd::EtcdKeyValue> kv) {
              read.set_value({std::move(status), std::move(kv)});
            });
  const auto [status, kv] = read.get_future().get();
  ASSERT_TRUE(status.ok()) << status.ToString();
  ASSERT_TRUE(kv.has_value());
  EXPECT_EQ(kv->value, fence->value);
  EXPECT_EQ(counters->tls_failures.load(), 0u);
  EXPECT_EQ(async.stats().open_connections, 1u);
}

// Start-up reads the routes' fence-key bindings from the store (gateway/server/route_bindings.h):
// a store the gateway cannot talk to stops the start (exit 3), naming it, instead of a gateway
// that would refuse every write.
TEST_F(EtcdTlsTest, WrongCaWrongNameAndNoClientCertificateStopTheStart) {
  // A CA that did not sign etcd's certificate.
  ExpectStartRefused("wrongca", ClientTls(Cert("other_ca.pem")), "certificate verify failed");

  // The certificate names localhost and 127.0.0.1, not the name the gateway expects.
  YAML::Node other_name = TrustedTls();
  other_name["server_name"] = "etcd.example";
  ExpectStartRefused("mismatch", other_name, "certificate verify failed");

  // etcd requires a client certificate (--client-cert-auth).
  YAML::Node no_client_certificate;
  no_client_certificate["ca_file"] = Cert("ca.pem");
  ExpectStartRefused("anonymous", no_client_certificate, "etcd");
}

TEST_F(EtcdTlsTest, NameVerificationOffIsExplicitAndLogged) {
  YAML::Node unverified = TrustedTls();
  unverified["server_name"] = "etcd.example";
  unverified["verify_hostname"] = false;
  auto gateway = StartGateway("unverified", unverified);
  ASSERT_NE(gateway, nullptr);
  EXPECT_EQ(Put(gateway->traffic_port(), "/kv/doc/x", "5").result_int(), 200u);
  EXPECT_NE(gateway->process().Stderr().find("WARNING: store: tls.verify_hostname is off"),
            std::string::npos)
      << gateway->process().Stderr();
}

TEST_F(EtcdTlsTest, MissingCaFileStopsTheStart) {
  auto missing = integration::GatewayConfig::HttpBackend(backend_.port());
  missing["store"]["kind"] = "etcd";
  missing["store"]["endpoints"].push_back(cluster_->endpoints()[0]);
  missing["store"]["tls"]["ca_file"] = Cert("absent.pem");
  missing["locks"]["enabled"] = false;
  const std::string config = dir_.WriteFile("missing.yaml", missing.Yaml());
  std::string error;
  auto start = integration::Process::Start(
      {integration::FencegateBinary(), "--config", config, "--listen", "127.0.0.1:0",
       "--admin-listen", "127.0.0.1:0", "--data-dir", dir_.Join("data")},
      &error);
  ASSERT_NE(start, nullptr) << error;
  EXPECT_NE(start->Wait(std::chrono::seconds(30)), 0);
  ASSERT_TRUE(start->WaitForOutputEnd(std::chrono::seconds(30)));
  EXPECT_NE(start->Stderr().find(Cert("absent.pem")), std::string::npos) << start->Stderr();
}

}  // namespace
}  // namespace fencegate::etcdtest
