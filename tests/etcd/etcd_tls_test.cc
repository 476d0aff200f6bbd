// TLS from the gateway to etcd (`store: {kind: etcd, tls: {...}}`): a real etcd serving HTTPS
// with client certificate auth, certificates made by the openssl CLI at test time
// (tests/support/make_test_certs.sh). A trusted member takes the fences; a wrong CA, a name the
// certificate does not carry, or no client certificate are refused (503, counted), and turning
// name verification off works and is logged.
#include <gtest/gtest.h>

#include <chrono>

#include "lockstore/etcd/etcd_client.h"
#include "tests/etcd/etcd_cluster.h"
#include "tests/support/admin_client.h"
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

  // A gateway whose store section carries `tls_keys` (4-space indented lines under tls:).
  std::unique_ptr<GatewayInstance> StartGateway(const std::string& name,
                                                const std::string& tls_keys) {
    integration::HttpBackendConfigOptions options;
    options.backend_port = backend_.port();
    options.access_log_path = dir_.Join(name + ".access.log");
    const std::string config = integration::HttpBackendConfig(options) +
                               "store:\n  kind: etcd\n  prefix: /gw/\n  request_timeout: 1s\n"
                               "  operation_timeout: 2s\n  endpoints:\n    - " +
                               cluster_->endpoints()[0] + "\n  tls:\n" + tls_keys +
                               "locks:\n  enabled: false\n";
    std::string error;
    auto gateway =
        GatewayInstance::Start(dir_.WriteFile(name + ".yaml", config), dir_.Join(name), &error);
    EXPECT_NE(gateway, nullptr) << error;
    return gateway;
  }

  std::string TrustedKeys() const {
    return "    ca_file: " + Cert("ca.pem") + "\n    client_cert_file: " + Cert("client.pem") +
           "\n    client_key_file: " + Cert("client.key") + "\n";
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

  // A write the store cannot take: 503 problem+json, nothing forwarded.
  void ExpectRefused(GatewayInstance& gateway, const std::string& what) {
    const integration::Response response = Put(gateway.traffic_port(), "/kv/doc/x", "5");
    EXPECT_EQ(response.result_int(), 503u) << what;
    EXPECT_EQ(response[integration::http::field::content_type], "application/problem+json") << what;
    EXPECT_NE(response.body().find("store-error"), std::string::npos) << what << response.body();
    EXPECT_TRUE(backend_.Requests().empty()) << what;
  }

  integration::TempDir dir_;
  const std::string certs_ = dir_.Join("certs");
  integration::RecordingBackend backend_;
  std::unique_ptr<EtcdCluster> cluster_;
};

TEST_F(EtcdTlsTest, TrustedMemberTakesTheFencesOverMutualTls) {
  auto gateway = StartGateway("good", TrustedKeys());
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
  bool found = false;
  for (const auto& kv : kvs) found = found || kv.key.find("kv:doc") != std::string::npos;
  EXPECT_TRUE(found) << kvs.size() << " keys under /gw/";
}

TEST_F(EtcdTlsTest, WrongCaWrongNameAndNoClientCertificateAreRefused) {
  // A CA that did not sign etcd's certificate.
  auto wrong_ca =
      StartGateway("wrongca", "    ca_file: " + Cert("other_ca.pem") +
                                  "\n    client_cert_file: " + Cert("client.pem") +
                                  "\n    client_key_file: " + Cert("client.key") + "\n");
  ASSERT_NE(wrong_ca, nullptr);
  ExpectRefused(*wrong_ca, "wrong CA");
  EXPECT_GT(TlsFailures(*wrong_ca), 0);

  // The certificate names localhost and 127.0.0.1, not the name the gateway expects.
  auto mismatch = StartGateway("mismatch", TrustedKeys() + "    server_name: etcd.example\n");
  ASSERT_NE(mismatch, nullptr);
  ExpectRefused(*mismatch, "hostname mismatch");
  EXPECT_GT(TlsFailures(*mismatch), 0);

  // etcd requires a client certificate (--client-cert-auth).
  auto anonymous = StartGateway("anonymous", "    ca_file: " + Cert("ca.pem") + "\n");
  ASSERT_NE(anonymous, nullptr);
  ExpectRefused(*anonymous, "no client certificate");
}

TEST_F(EtcdTlsTest, NameVerificationOffIsExplicitAndLogged) {
  auto gateway = StartGateway(
      "unverified", TrustedKeys() + "    server_name: etcd.example\n    verify_hostname: false\n");
  ASSERT_NE(gateway, nullptr);
  EXPECT_EQ(Put(gateway->traffic_port(), "/kv/doc/x", "5").result_int(), 200u);
  EXPECT_NE(gateway->process().Stderr().find("WARNING: store: tls.verify_hostname is off"),
            std::string::npos)
      << gateway->process().Stderr();
}

TEST_F(EtcdTlsTest, MissingCaFileStopsTheStart) {
  integration::HttpBackendConfigOptions options;
  options.backend_port = backend_.port();
  const std::string config = dir_.WriteFile(
      "missing.yaml", integration::HttpBackendConfig(options) +
                          "store:\n  kind: etcd\n  endpoints:\n    - " + cluster_->endpoints()[0] +
                          "\n  tls:\n    ca_file: " + Cert("absent.pem") +
                          "\nlocks:\n  enabled: false\n");
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
