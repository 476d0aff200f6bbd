// A verified TLS client certificate as a principal, through the real binary: the traffic
// listener verifies client certificates (client_auth optional) and a route's policy names the
// principal its subject maps to. Certificates from tests/support/make_test_certs.sh.
#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "tests/support/admin_client.h"
#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/lock_test_support.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_certs.h"
#include "tests/support/tls_client.h"

namespace fencegate::integration {
namespace {

class AuthMtlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(MakeTestCerts(certs_, &error)) << error;
    gateway_ = GatewayInstance::Start(dir_.WriteFile("fencegate.yaml", Config().Yaml()),
                                      dir_.Join("data"), &error);
    ASSERT_NE(gateway_, nullptr) << error;
  }

  virtual GatewayConfig Config() const {
    GatewayConfig config;
    config["access_log"]["path"] = "";
    config.Backend("files") = FilesystemBackendAt("{data_dir}/files");
    YAML::Node kv = config.Route("kv", "/kv/", "files", "kv:{segment:2}");
    kv["policy"]["read"] = Sequence({"*"});
    kv["policy"]["write"] = Sequence({"writer-1"});
    kv["policy"]["advance"]["writer-1"] = Sequence({"kv:"});
    // client.pem: subject /CN=writer-1/O=example, i.e. RFC 2253 "O=example,CN=writer-1".
    YAML::Node writer;
    writer["name"] = "writer-1";
    writer["tls_subjects"] = Sequence({"O=example,CN=writer-1"});
    config["auth"]["principals"].push_back(writer);
    config["tls"]["traffic"] = Listener();
    return config;
  }

  // A TLS listener with this test's server certificate, asking clients for theirs.
  YAML::Node Listener() const {
    YAML::Node listener = TlsListener(Cert("server.pem"), Cert("server.key"));
    listener["client_ca_file"] = Cert("ca.pem");
    listener["client_auth"] = "optional";
    return listener;
  }

  std::string Cert(const std::string& name) const { return certs_ + "/" + name; }

  TlsClientOptions Client(bool with_certificate) const {
    return TestClient(certs_, with_certificate ? "client" : "");
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

// The admin listener over TLS with its own client CA check: an admin principal proves itself with
// its certificate as with a key, the traffic principal's certificate opens nothing there, and
// the audit trail of forced operations names the certificate's principal.
class AdminMtlsTest : public AuthMtlsTest {
 protected:
  GatewayConfig Config() const override {
    GatewayConfig config = AuthMtlsTest::Config();
    YAML::Node operator_principal;
    operator_principal["name"] = "ops-1";
    operator_principal["tls_dns_sans"] = Sequence({"ops-1.example"});
    config["admin"]["principals"].push_back(operator_principal);
    config["tls"]["admin"] = Listener();
    return config;
  }

  TlsClientOptions As(const std::string& name) const { return TestClient(certs_, name); }

  Response Admin(const std::string& certificate, http::verb method, const std::string& target,
                 std::string body = {}) {
    std::string error;
    auto response = TlsFetch(gateway_->admin_port(), As(certificate),
                             MakeRequest(method, target, {}, std::move(body)), &error);
    if (!response) {
      ADD_FAILURE() << error;
      return {};
    }
    return *response;
  }

  Response Traffic(const std::string& certificate, http::verb method, const std::string& target,
                   std::uint64_t token = 0, std::string body = {}) {
    Request request = MakeRequest(method, target, {}, std::move(body));
    if (token != 0) request.set("Fencing-Token", std::to_string(token));
    std::string error;
    auto response = TlsFetch(gateway_->traffic_port(), As(certificate), std::move(request), &error);
    if (!response) {
      ADD_FAILURE() << error;
      return {};
    }
    return *response;
  }
};

TEST_F(AdminMtlsTest, TheOperatorCertificateOpensTheAdminApiAndNothingElse) {
  EXPECT_EQ(Admin("", http::verb::get, "/healthz").result_int(), 200);
  const Response none = Admin("", http::verb::get, "/admin/rejections");
  EXPECT_EQ(none.result_int(), 401);
  EXPECT_EQ(none[http::field::content_type], "application/problem+json");
  // The traffic principal's certificate verifies against the same CA but names no operator.
  EXPECT_EQ(Admin("client", http::verb::get, "/admin/rejections").result_int(), 401);
  EXPECT_EQ(Admin("operator", http::verb::get, "/admin/rejections").result_int(), 200);
  // And the operator's certificate names no traffic principal.
  EXPECT_EQ(Traffic("operator", http::verb::put, "/kv/m/x", 5, "v").result_int(), 401);
  EXPECT_EQ(Traffic("client", http::verb::put, "/kv/m/x", 5, "v").result_int(), 201);

  const std::string metrics = Admin("operator", http::verb::get, "/metrics").body();
  EXPECT_EQ(MetricValue(metrics, "fencegate_admin_auth_refusals_total",
                        R"(reason="missing_credentials")"),
            1.0);
  EXPECT_EQ(MetricValue(metrics, "fencegate_admin_auth_refusals_total",
                        R"(reason="invalid_credentials")"),
            1.0);
  EXPECT_EQ(MetricValue(metrics, "fencegate_auth_refusals_total",
                        R"(route="kv",reason="invalid_credentials")"),
            1.0);
}

TEST_F(AdminMtlsTest, ForcedOperationsRecordTheCertificatesPrincipal) {
  ASSERT_EQ(Traffic("client", http::verb::put, "/kv/m/x", 90, "v").result_int(), 201);
  const std::string repair = R"({"highest_token": 4, "reason": "inflated", "operator": "eve"})";
  EXPECT_EQ(Admin("client", http::verb::post, "/admin/fences/kv:m/repair", repair).result_int(),
            401);
  // The PUT's answer can reach us a moment before its write stops counting as in flight, which
  // a repair refuses with 409 fence-busy: retry that.
  Response repaired;
  ASSERT_TRUE(Eventually([&] {
    repaired = Admin("operator", http::verb::post, "/admin/fences/kv:m/repair", repair);
    return repaired.result_int() != 409;
  }));
  ASSERT_EQ(repaired.result_int(), 200) << repaired.body();

  const Response acquired =
      Traffic("client", http::verb::post, "/locks/job-9", 0, R"({"ttl_ms": 60000})");
  ASSERT_EQ(acquired.result_int(), 200) << acquired.body();
  const Response forced = Admin("operator", http::verb::post, "/admin/locks/job-9/force-release",
                                R"({"reason": "wedged"})");
  ASSERT_EQ(forced.result_int(), 200) << forced.body();

  const Response repairs = Admin("operator", http::verb::get, "/admin/fence-repairs");
  ASSERT_EQ(repairs.result_int(), 200);
  const auto trail = boost::json::parse(repairs.body());
  ASSERT_EQ(trail.as_array().size(), 1u);
  EXPECT_EQ(trail.as_array()[0].at("operator").as_string(), "ops-1");
  EXPECT_EQ(trail.as_array()[0].at("reason").as_string(), "inflated (operator field: eve)");
  EXPECT_EQ(trail.as_array()[0].at("highest_token").to_number<int>(), 4);
  const Response audit = Admin("operator", http::verb::get, "/admin/lock-audit");
  ASSERT_EQ(audit.result_int(), 200);
  const auto locks = boost::json::parse(audit.body());
  ASSERT_EQ(locks.as_array().size(), 1u);
  EXPECT_EQ(locks.as_array()[0].at("operator").as_string(), "ops-1");
}

}  // namespace
}  // namespace fencegate::integration
