// A verified TLS client certificate as a principal, through the real binary: the traffic
// listener verifies client certificates (client_auth optional) and a route's policy names the
// principal its subject maps to. Certificates from tests/support/make_test_certs.sh.
#include <gtest/gtest.h>

#include "tests/integration/admin_client.h"
#include "tests/integration/gateway_instance.h"
#include "tests/integration/http_client.h"
#include "tests/integration/temp_dir.h"
#include "tests/integration/tls_client.h"

namespace fencegate::integration {
namespace {

class AuthMtlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    auto script = Process::Start(
        {"/bin/bash", FENCEGATE_SOURCE_DIR "/tests/support/make_test_certs.sh", certs_}, &error);
    ASSERT_NE(script, nullptr) << error;
    ASSERT_EQ(script->Wait(std::chrono::seconds(60)), 0) << script->Stderr();
    // client.pem: subject /CN=writer-1/O=example, i.e. RFC 2253 "O=example,CN=writer-1".
    const std::string config =
        "access_log:\n  path: \"\"\n"
        "backends:\n  files:\n    kind: filesystem\n    root: \"{data_dir}/files\"\n"
        "routes:\n  - name: kv\n    prefix: /kv/\n    backend: files\n"
        "    fence_key: \"kv:{segment:2}\"\n"
        "    policy:\n"
        "      read: [\"*\"]\n"
        "      write: [writer-1]\n"
        "      advance: {writer-1: [\"kv:\"]}\n"
        "auth:\n"
        "  principals:\n"
        "    - name: writer-1\n"
        "      tls_subjects: [\"O=example,CN=writer-1\"]\n"
        "tls:\n  traffic:\n"
        "    cert_file: " +
        Cert("server.pem") + "\n    key_file: " + Cert("server.key") +
        "\n    client_ca_file: " + Cert("ca.pem") + "\n    client_auth: optional\n";
    gateway_ =
        GatewayInstance::Start(dir_.WriteFile("fencegate.yaml", config), dir_.Join("data"), &error);
    ASSERT_NE(gateway_, nullptr) << error;
  }

  std::string Cert(const std::string& name) const { return certs_ + "/" + name; }

  TlsClientOptions Client(bool with_certificate) const {
    TlsClientOptions options;
    options.ca_file = Cert("ca.pem");
    if (with_certificate) {
      options.cert_file = Cert("client.pem");
      options.key_file = Cert("client.key");
    }
    return options;
  }

  int Put(bool with_certificate, std::uint64_t token, const char* bearer = nullptr) {
    Request request =
        MakeRequest(http::verb::put, "/kv/m/x", {{"Fencing-Token", std::to_string(token)}}, "v");
    if (bearer != nullptr) request.set(http::field::authorization, std::string("Bearer ") + bearer);
    std::string error;
    auto response =
        TlsFetch(gateway_->traffic_port(), Client(with_certificate), std::move(request), &error);
    EXPECT_TRUE(response.has_value()) << error;
    return response ? response->result_int() : 0;
  }

  TempDir dir_;
  const std::string certs_ = dir_.Join("certs");
  std::unique_ptr<GatewayInstance> gateway_;
};

TEST_F(AuthMtlsTest, TheVerifiedCertificateIsThePrincipal) {
  EXPECT_EQ(Put(/*with_certificate=*/false, 5), 401);
  std::string error;
  auto fence = FetchAdminJson(gateway_->admin_port(), "/admin/fences/kv:m", &error);
  EXPECT_FALSE(fence.has_value());  // never fenced

  EXPECT_EQ(Put(/*with_certificate=*/true, 5), 201);  // created by the filesystem backend
  fence = FetchAdminJson(gateway_->admin_port(), "/admin/fences/kv:m", &error);
  ASSERT_TRUE(fence.has_value()) << error;
  EXPECT_EQ(fence->at("highest_token").to_number<std::uint64_t>(), 5u);

  // A bearer key, when sent, decides: a wrong one is refused despite the good certificate.
  EXPECT_EQ(Put(/*with_certificate=*/true, 6, "not-a-key"), 401);
  const std::string metrics = FetchMetricsText(gateway_->admin_port());
  EXPECT_EQ(MetricValue(metrics, "fencegate_auth_refusals_total",
                        R"(route="kv",reason="missing_credentials")"),
            1.0);
  EXPECT_EQ(MetricValue(metrics, "fencegate_auth_refusals_total",
                        R"(route="kv",reason="invalid_credentials")"),
            1.0);
}

}  // namespace
}  // namespace fencegate::integration
