// TLS from the gateway to an https backend: a real nginx (Debian's nginx-light) terminating TLS
// with certificates made by the openssl CLI at test time.
#include <csignal>
#include <filesystem>

#include <gtest/gtest.h>
#include <boost/asio/ip/tcp.hpp>

#include "tests/support/eventually.h"
#include "tests/support/fencegate_run.h"
#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_certs.h"

namespace fencegate::integration {
namespace {

std::uint16_t FreePort() {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor acceptor(
      ioc, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  return acceptor.local_endpoint().port();
}

class TlsBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(MakeTestCerts(certs_, &error)) << error;
    StartNginx();
  }

  void TearDown() override {
    gateway_.reset();
    if (nginx_) nginx_->Stop(std::chrono::seconds(10));
  }

  std::string Cert(const std::string& name) const { return certs_ + "/" + name; }

  // One nginx, two TLS listeners: `good_port_` with the localhost/127.0.0.1 certificate,
  // `wronghost_port_` with one for elsewhere.example only. Client certificates from the test CA
  // are checked when sent, and the answer says whose it was.
  void StartNginx() {
    good_port_ = FreePort();
    wronghost_port_ = FreePort();
    const std::string dir = dir_.Join("nginx");
    std::filesystem::create_directories(dir);
    std::string servers;
    for (const auto& [port, cert] : {std::pair{good_port_, std::string("server")},
                                     std::pair{wronghost_port_, std::string("wronghost")}}) {
      servers += "  server {\n    listen 127.0.0.1:" + std::to_string(port) +
                 " ssl;\n    ssl_certificate " + Cert(cert + ".pem") +
                 ";\n    ssl_certificate_key " + Cert(cert + ".key") +
                 ";\n    ssl_client_certificate " + Cert("ca.pem") +
                 ";\n    ssl_verify_client optional;\n"
                 "    location / { return 200 \"backend client=[$ssl_client_s_dn]\\n\"; }\n  }\n";
    }
    const std::string conf = dir_.WriteFile(
        "nginx/nginx.conf",
        "daemon off;\nmaster_process off;\nworker_processes 1;\npid " + dir + "/nginx.pid;\n" +
            "error_log " + dir + "/error.log warn;\nevents { worker_connections 64; }\nhttp {\n" +
            "  access_log off;\n  client_body_temp_path " + dir + ";\n  proxy_temp_path " + dir +
            ";\n  fastcgi_temp_path " + dir + ";\n  uwsgi_temp_path " + dir +
            ";\n  scgi_temp_path " + dir + ";\n" + servers + "}\n");
    std::string error;
    nginx_ = Process::Start({"/usr/sbin/nginx", "-p", dir, "-c", conf}, &error);
    ASSERT_NE(nginx_, nullptr) << error;
    // Up once both ports accept (bounded).
    ASSERT_TRUE(Eventually([&] {
      HttpConnection probe;
      HttpConnection probe2;
      return probe.Connect(good_port_) && probe2.Connect(wronghost_port_);
    })) << "nginx did not start: "
        << nginx_->Stderr();
  }

  // A route per backend: /<name>/ -> backend <name> (kind http, plus the keys given).
  void StartGateway(const std::vector<std::pair<std::string, YAML::Node>>& backends) {
    GatewayConfig config;
    config["access_log"]["path"] = "";
    for (const auto& [name, keys] : backends) {
      config.Backend(name)["kind"] = "http";
      SetKeys(config.Backend(name), keys);
      config.Route(name, "/" + name + "/", name, name + ":{segment:2}");
    }
    std::string error;
    gateway_ = GatewayInstance::Start(dir_.WriteFile("fencegate.yaml", config.Yaml()),
                                      dir_.Join("data"), &error);
    ASSERT_NE(gateway_, nullptr) << error;
  }

  // A backend's url to nginx on `port`, trusting the CA file `ca_file` unless it is empty.
  static YAML::Node Https(std::uint16_t port, const std::string& ca_file) {
    YAML::Node keys;
    keys["url"] = "https://127.0.0.1:" + std::to_string(port);
    if (!ca_file.empty()) keys["tls_ca_file"] = ca_file;
    return keys;
  }

  Response Put(const std::string& target) {
    std::string error;
    std::optional<Response> response =
        Fetch(gateway_->traffic_port(),
              MakeRequest(http::verb::put, target, {{"Fencing-Token", "5"}}, "data"), &error);
    if (!response) {
      ADD_FAILURE() << target << ": " << error;
      return Response();
    }
    return *response;
  }

  TempDir dir_;
  const std::string certs_ = dir_.Join("certs");
  std::uint16_t good_port_ = 0;
  std::uint16_t wronghost_port_ = 0;
  std::unique_ptr<Process> nginx_;
  std::unique_ptr<GatewayInstance> gateway_;
};

TEST_F(TlsBackendTest, VerifiesTheBackendAndRefusesMismatches) {
  const std::string ca = Cert("ca.pem");
  YAML::Node client_cert = Https(good_port_, ca);
  client_cert["tls_client_cert_file"] = Cert("client.pem");
  client_cert["tls_client_key_file"] = Cert("client.key");
  YAML::Node named = Https(wronghost_port_, ca);
  named["tls_server_name"] = "elsewhere.example";
  YAML::Node unverified = Https(wronghost_port_, ca);
  unverified["tls_verify_hostname"] = false;
  StartGateway({
      {"good", Https(good_port_, ca)},
      {"mtls", client_cert},
      {"mismatch", Https(wronghost_port_, ca)},
      {"named", named},
      {"unverified", unverified},
      {"wrongca", Https(good_port_, Cert("other_ca.pem"))},
      {"systemca", Https(good_port_, "")},
  });

  Response good = Put("/good/a");
  EXPECT_EQ(good.result_int(), 200);
  EXPECT_EQ(good.body(), "backend client=[]\n");
  // Backend mTLS: nginx saw the gateway's client certificate.
  Response mtls = Put("/mtls/a");
  EXPECT_EQ(mtls.result_int(), 200);
  EXPECT_NE(mtls.body().find("CN=writer-1"), std::string::npos) << mtls.body();

  // The certificate chains to the CA but names elsewhere.example, not 127.0.0.1: refused.
  Response mismatch = Put("/mismatch/a");
  EXPECT_EQ(mismatch.result_int(), 502);
  EXPECT_NE(mismatch.body().find("upstream-tls-failed"), std::string::npos) << mismatch.body();
  EXPECT_EQ(Put("/named/a").result_int(), 200);
  EXPECT_EQ(Put("/unverified/a").result_int(), 200);
  EXPECT_NE(gateway_->process().Stderr().find("WARNING: backend 'unverified': tls_verify_hostname "
                                              "is off"),
            std::string::npos)
      << gateway_->process().Stderr();
  // A CA that did not sign the backend's certificate, and the system store (which does not
  // hold the test CA): refused.
  EXPECT_EQ(Put("/wrongca/a").result_int(), 502);
  EXPECT_EQ(Put("/systemca/a").result_int(), 502);

  // Keep-alive to the backend: a second request on the pooled TLS connection.
  EXPECT_EQ(Put("/good/b").result_int(), 200);
}

// The configurations are literal text: the errors' lines and columns in it are asserted.
TEST_F(TlsBackendTest, ConfigErrorsNameTheKey) {
  const std::string config = dir_.WriteFile(
      "bad.yaml",
      "backends:\n  plain:\n    kind: http\n    url: http://127.0.0.1:1\n"
      "    tls_ca_file: /nonexistent\n"
      "  store:\n    kind: s3\n    endpoint: http://127.0.0.1:1\n    tls_ca_file: /ca.pem\n"
      "    access_key: a\n"
      "    secret_key: b\n"
      "routes:\n  - name: r\n    prefix: /r/\n    backend: plain\n    fence_key: \"r\"\n");
  const Finished check = RunFencegate({"--check-config", config});
  EXPECT_EQ(check.status, 1);
  EXPECT_NE(check.stderr_text.find("bad.yaml:4"), std::string::npos) << check.stderr_text;
  EXPECT_NE(check.stderr_text.find("not https://"), std::string::npos) << check.stderr_text;
  EXPECT_NE(check.stderr_text.find("backends.store.endpoint"), std::string::npos)
      << check.stderr_text;

  // A CA file that does not exist: a configuration error at its key (--check-config finds it),
  // and the gateway does not start.
  const std::string missing = dir_.WriteFile(
      "missing.yaml",
      "backends:\n  api:\n    kind: http\n    url: https://127.0.0.1:" +
          std::to_string(good_port_) + "\n    tls_ca_file: " + Cert("absent.pem") +
          "\nroutes:\n  - name: r\n    prefix: /r/\n    backend: api\n    fence_key: \"r\"\n");
  const Finished start =
      RunFencegate({"--config", missing, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
                    "--data-dir", dir_.Join("data")});
  EXPECT_EQ(start.status, 1);
  EXPECT_NE(start.stderr_text.find("missing.yaml:5:18: backends.api.tls_ca_file: cannot read '" +
                                   Cert("absent.pem") + "'"),
            std::string::npos)
      << start.stderr_text;
}

}  // namespace
}  // namespace fencegate::integration
