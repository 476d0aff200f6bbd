// TLS from the gateway to a webdav backend: a real Apache with mod_ssl (and client certificates
// required), certificates made by the openssl CLI at test time. Both the adapter's own
// LOCK/PROPFIND/PROPPATCH/UNLOCK connections and the passthrough go over https.
#include <gtest/gtest.h>

#include <chrono>
#include <regex>

#include "tests/support/admin_client.h"
#include "tests/support/tls_client.h"
#include "tests/webdav/webdav_support.h"

namespace fencegate::webdav_test {
namespace {

namespace http = boost::beast::http;
using integration::MakeRequest;

class WebdavTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ApacheAvailable()) GTEST_SKIP() << "apache2 with mod_dav_fs is not installed";
    std::string error;
    auto script = integration::Process::Start(
        {"/bin/bash", FENCEGATE_SOURCE_DIR "/tests/support/make_test_certs.sh", certs_}, &error);
    ASSERT_NE(script, nullptr) << error;
    ASSERT_EQ(script->Wait(std::chrono::seconds(60)), 0) << script->Stderr();
    apache_ = ApacheDav::Start(&error,
                               "LoadModule ssl_module /usr/lib/apache2/modules/mod_ssl.so\n"
                               "SSLEngine on\n"
                               "SSLCertificateFile " +
                                   Cert("server.pem") + "\nSSLCertificateKeyFile " +
                                   Cert("server.key") + "\nSSLCACertificateFile " + Cert("ca.pem") +
                                   "\nSSLVerifyClient require\n");
    ASSERT_NE(apache_, nullptr) << error;
  }

  std::string Cert(const std::string& name) const { return certs_ + "/" + name; }

  // Straight to Apache over TLS, as a trusted client.
  integration::Response Direct(integration::Request request) {
    const integration::TlsClientOptions options{.ca_file = Cert("ca.pem"),
                                                .cert_file = Cert("client.pem"),
                                                .key_file = Cert("client.key"),
                                                .server_name = "localhost"};
    std::string error;
    auto response = integration::TlsFetch(apache_->port(), options, std::move(request), &error);
    if (!response) {
      ADD_FAILURE() << error;
      return integration::Response();
    }
    return *response;
  }

  std::unique_ptr<Gateway> Start(const YAML::Node& tls_keys) {
    std::string error;
    auto gateway = StartGateway(
        DavGatewayConfig("https://127.0.0.1:" + std::to_string(apache_->port()), tls_keys), &error);
    EXPECT_NE(gateway, nullptr) << error;
    return gateway;
  }

  // The backend's TLS keys: the gateway's client certificate, and `ca` as the CA it trusts.
  YAML::Node ClientTls(const std::string& ca) const {
    YAML::Node keys;
    keys["tls_ca_file"] = Cert(ca);
    keys["tls_client_cert_file"] = Cert("client.pem");
    keys["tls_client_key_file"] = Cert("client.key");
    return keys;
  }
  YAML::Node TrustedKeys() const { return ClientTls("ca.pem"); }

  static integration::Response Put(const Gateway& gateway, const std::string& path,
                                   const std::string& token, const std::string& body) {
    return Send(gateway.port(),
                MakeRequest(http::verb::put, path, {{"Fencing-Token", token}}, body));
  }

  static double ConnectErrors(const Gateway& gateway) {
    return integration::MetricValue(integration::FetchMetricsText(gateway.instance->admin_port()),
                                    "fencegate_upstream_errors_total",
                                    "kind=\"connect\",route=\"dav\"")
        .value_or(0);
  }

  // A backend whose certificate is refused cannot be probed for the conditions fenced writes
  // rely on: a fenced write is refused 503 backend-conditions-unverified naming the TLS failure,
  // and nothing is written; an unfenced request is refused at the TLS handshake, 502
  // problem+json naming the failure, counted.
  void ExpectRefused(const Gateway& gateway, const std::string& what) {
    const integration::Response response = Put(gateway, "/dav/refused.txt", "5", "no");
    EXPECT_EQ(response.result_int(), 503u) << what;
    EXPECT_EQ(response[http::field::content_type], "application/problem+json") << what;
    EXPECT_EQ(ProblemType(response.body()), "backend-conditions-unverified") << what;
    EXPECT_NE(response.body().find("certificate verify failed"), std::string::npos)
        << what << ": " << response.body();
    EXPECT_EQ(Direct(MakeRequest(http::verb::get, "/dav/refused.txt")).result_int(), 404u) << what;
    const integration::Response read =
        Send(gateway.port(), MakeRequest(http::verb::get, "/dav/refused.txt"));
    EXPECT_EQ(read.result_int(), 502u) << what;
    EXPECT_NE(read.body().find("certificate verify failed"), std::string::npos)
        << what << ": " << read.body();
    EXPECT_GT(ConnectErrors(gateway), 0) << what;
  }

  integration::TempDir dir_;
  const std::string certs_ = dir_.Join("certs");
  std::unique_ptr<ApacheDav> apache_;
};

TEST_F(WebdavTlsTest, FencedWriteLandsOverMutualTls) {
  auto gateway = Start(TrustedKeys());
  ASSERT_NE(gateway, nullptr);
  const unsigned first = Put(*gateway, "/dav/doc.txt", "5", "five").result_int();
  EXPECT_TRUE(first == 201u || first == 204u) << first;
  EXPECT_EQ(Put(*gateway, "/dav/doc.txt", "4", "four").result_int(), 409u);
  const unsigned second = Put(*gateway, "/dav/doc.txt", "6", "six").result_int();
  EXPECT_TRUE(second == 201u || second == 204u) << second;
  // A read through the passthrough, also over TLS.
  const integration::Response read =
      Send(gateway->port(), MakeRequest(http::verb::get, "/dav/doc.txt"));
  EXPECT_EQ(read.result_int(), 200u);
  EXPECT_EQ(read.body(), "six");

  // On the server: the content and the token property the adapter stored with PROPPATCH.
  EXPECT_EQ(Direct(MakeRequest(http::verb::get, "/dav/doc.txt")).body(), "six");
  const integration::Response stored =
      Direct(MakeRequest(http::verb::propfind, "/dav/doc.txt", {{"Depth", "0"}},
                         "<?xml version=\"1.0\"?><D:propfind xmlns:D=\"DAV:\"><D:prop>"
                         "<F:fencing-token xmlns:F=\"urn:fencegate\"/></D:prop></D:propfind>"));
  static const std::regex value(R"(fencing-token[^>/]*>\s*6\s*<)");
  EXPECT_TRUE(std::regex_search(stored.body(), value)) << stored.body();
  EXPECT_EQ(ConnectErrors(*gateway), 0);
}

TEST_F(WebdavTlsTest, WrongCaAndHostnameMismatchAreRefused) {
  auto wrong_ca = Start(ClientTls("other_ca.pem"));
  ASSERT_NE(wrong_ca, nullptr);
  ExpectRefused(*wrong_ca, "wrong CA");

  // Apache's certificate names localhost and 127.0.0.1, not elsewhere.example.
  YAML::Node other_name = TrustedKeys();
  other_name["tls_server_name"] = "elsewhere.example";
  auto mismatch = Start(other_name);
  ASSERT_NE(mismatch, nullptr);
  ExpectRefused(*mismatch, "hostname mismatch");
}

TEST_F(WebdavTlsTest, NameVerificationOffIsExplicitAndLogged) {
  YAML::Node unverified = TrustedKeys();
  unverified["tls_server_name"] = "elsewhere.example";
  unverified["tls_verify_hostname"] = false;
  auto gateway = Start(unverified);
  ASSERT_NE(gateway, nullptr);
  const unsigned status = Put(*gateway, "/dav/loose.txt", "1", "x").result_int();
  EXPECT_TRUE(status == 201u || status == 204u) << status;
  EXPECT_NE(gateway->instance->process().Stderr().find(
                "WARNING: backend 'dav': tls_verify_hostname is off"),
            std::string::npos)
      << gateway->instance->process().Stderr();
}

}  // namespace
}  // namespace fencegate::webdav_test
