// TLS termination through the real binary, with certificates made by the openssl CLI
// (tests/support/make_test_certs.sh) for each test.
#include <cstdio>
#include <filesystem>
#include <thread>

#include <csignal>

#include <gtest/gtest.h>

#include "tests/support/admin_client.h"
#include "tests/support/eventually.h"
#include "tests/support/fencegate_run.h"
#include "tests/support/gateway_config.h"
#include "tests/support/gateway_instance.h"
#include "tests/support/http_client.h"
#include "tests/support/recording_backend.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_certs.h"
#include "tests/support/tls_client.h"

namespace fencegate::integration {
namespace {

// How the gateway under test terminates TLS.
struct TlsSetup {
  bool traffic_tls = true;
  std::string client_auth = "off";
  bool admin_tls = false;
  // 0: the route writes to a filesystem backend; else to an http backend on this port.
  std::uint16_t http_backend_port = 0;
};

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(MakeTestCerts(certs_, &error)) << error;
    // The listener reads these two; the reload test replaces them.
    std::filesystem::copy_file(Cert("server.pem"), Cert("live.pem"));
    std::filesystem::copy_file(Cert("server.key"), Cert("live.key"));
  }

  std::string Cert(const std::string& name) const { return certs_ + "/" + name; }

  YAML::Node ServerTls(const std::string& client_auth) const {
    YAML::Node listener = TlsListener(Cert("live.pem"), Cert("live.key"));
    if (client_auth != "off") {
      listener["client_ca_file"] = Cert("ca.pem");
      listener["client_auth"] = client_auth;
    }
    return listener;
  }

  void StartGateway(const TlsSetup& setup) {
    GatewayConfig config;
    config["access_log"]["path"] = "";
    config.Backend("files") = setup.http_backend_port == 0 ? FilesystemBackendAt("{data_dir}/files")
                                                           : HttpBackendAt(setup.http_backend_port);
    config.Route("kv", "/kv/", "files", "kv:{segment:2}");
    if (setup.traffic_tls) config["tls"]["traffic"] = ServerTls(setup.client_auth);
    if (setup.admin_tls) config["tls"]["admin"] = ServerTls("off");
    std::string error;
    gateway_ = GatewayInstance::Start(dir_.WriteFile("fencegate.yaml", config.Yaml()),
                                      dir_.Join("data"), &error);
    ASSERT_NE(gateway_, nullptr) << error;
  }

  TlsClientOptions Client(const std::string& name = "") const { return TestClient(certs_, name); }

  static Request PutRequest(const std::string& target, std::uint64_t token, std::string body) {
    return MakeRequest(http::verb::put, target, {{"Fencing-Token", std::to_string(token)}},
                       std::move(body));
  }

  // The sample's value once it reaches `expected` (the gateway counts a failed handshake just
  // after the client saw it fail), or the last value read; bounded in tries.
  std::optional<double> AwaitMetric(const std::string& name, const std::string& labels,
                                    double expected) {
    std::optional<double> value;
    Eventually(
        [&] {
          value = MetricValue(FetchMetricsText(gateway_->admin_port()), name, labels);
          return value == expected;
        },
        std::chrono::seconds(2));
    return value;
  }

  std::optional<double> Handshakes(const std::string& listener, const std::string& result) {
    return MetricValue(FetchMetricsText(gateway_->admin_port()), "fencegate_tls_handshakes_total",
                       "listener=\"" + listener + "\",result=\"" + result + "\"");
  }

  TempDir dir_;
  const std::string certs_ = dir_.Join("certs");
  std::unique_ptr<GatewayInstance> gateway_;
};

TEST_F(TlsTest, FencedWritesAndReadsOverTls) {
  StartGateway({});
  TlsConnection connection(Client());
  ASSERT_TRUE(connection.Connect(gateway_->traffic_port())) << connection.error();
  EXPECT_EQ(connection.AlpnProtocol(), "http/1.1");
  EXPECT_EQ(connection.ServerCommonName(), "localhost");

  std::optional<Response> put = connection.RoundTrip(PutRequest("/kv/a/x", 5, "hello"));
  ASSERT_TRUE(put.has_value()) << connection.error();
  EXPECT_EQ(put->result_int(), 201);
  // Same connection (keep-alive over TLS): the write is there, a stale one is refused.
  std::optional<Response> get = connection.RoundTrip(MakeRequest(http::verb::get, "/kv/a/x"));
  ASSERT_TRUE(get.has_value()) << connection.error();
  EXPECT_EQ(get->body(), "hello");
  std::optional<Response> stale = connection.RoundTrip(PutRequest("/kv/a/x", 4, "old"));
  ASSERT_TRUE(stale.has_value()) << connection.error();
  EXPECT_EQ(stale->result_int(), 409);
  EXPECT_EQ((*stale)[http::field::content_type], "application/problem+json");
  get = connection.RoundTrip(MakeRequest(http::verb::get, "/kv/a/x"));
  ASSERT_TRUE(get.has_value()) << connection.error();
  EXPECT_EQ(get->body(), "hello");

  // Plain HTTP on the TLS port: a plain 400 that says so, and the connection is closed.
  std::string error;
  std::optional<Response> plain =
      Fetch(gateway_->traffic_port(), MakeRequest(http::verb::get, "/kv/a/x"), &error);
  ASSERT_TRUE(plain.has_value()) << error;
  EXPECT_EQ(plain->result_int(), 400);
  EXPECT_EQ((*plain)[http::field::content_type], "application/problem+json");
  EXPECT_NE(plain->body().find("plain-http-on-tls-port"), std::string::npos) << plain->body();
  EXPECT_FALSE(plain->keep_alive());

  EXPECT_EQ(Handshakes("traffic", "ok"), 1.0);
  EXPECT_EQ(Handshakes("traffic", "plain_http"), 1.0);
}

// The backend learns the scheme the client used (RFC 7239 proto), on a keep-alive TLS
// connection as on its first request.
TEST_F(TlsTest, ForwardedTellsTheBackendTheClientUsedHttps) {
  RecordingBackend backend;
  TlsSetup setup;
  setup.http_backend_port = backend.port();
  StartGateway(setup);
  TlsConnection connection(Client());
  ASSERT_TRUE(connection.Connect(gateway_->traffic_port())) << connection.error();
  for (int i = 0; i < 2; ++i) {
    std::optional<Response> get = connection.RoundTrip(MakeRequest(http::verb::get, "/kv/a/x"));
    ASSERT_TRUE(get.has_value()) << connection.error();
    EXPECT_EQ(get->result_int(), 200);
  }
  ASSERT_TRUE(backend.WaitForCompleted(2, std::chrono::seconds(5)));
  for (const RecordedRequest& seen : backend.Requests()) {
    EXPECT_NE(seen.headers["Forwarded"].find(";proto=https"), std::string::npos)
        << seen.headers["Forwarded"];
  }
}

TEST_F(TlsTest, RequiredClientCertificateAdmitsOnlyTheClientCa) {
  StartGateway({.client_auth = "required"});
  const std::uint16_t port = gateway_->traffic_port();
  std::string error;
  std::optional<Response> admitted =
      TlsFetch(port, Client("client"), PutRequest("/kv/m/x", 5, "v5"), &error);
  ASSERT_TRUE(admitted.has_value()) << error;
  EXPECT_EQ(admitted->result_int(), 201);

  // No certificate, one from another CA, an expired one: no request gets through, so the
  // higher tokens they carry never touch the fence.
  for (const char* name : {"", "other_client", "expired_client"}) {
    EXPECT_FALSE(TlsFetch(port, Client(name), PutRequest("/kv/m/x", 9, "intruder")).has_value())
        << "client cert '" << name << "'";
  }
  const std::string handshakes = "fencegate_tls_handshakes_total";
  EXPECT_EQ(AwaitMetric(handshakes, R"(listener="traffic",result="no_client_cert")", 1), 1.0);
  EXPECT_EQ(AwaitMetric(handshakes, R"(listener="traffic",result="unknown_ca")", 1), 1.0);
  EXPECT_EQ(AwaitMetric(handshakes, R"(listener="traffic",result="expired_cert")", 1), 1.0);
  EXPECT_EQ(Handshakes("traffic", "ok"), 1.0);

  std::optional<boost::json::value> fence =
      FetchAdminJson(gateway_->admin_port(), "/admin/fences/kv:m", &error);
  ASSERT_TRUE(fence.has_value()) << error;
  EXPECT_EQ(fence->as_object().at("highest_token").to_number<std::uint64_t>(), 5u);
  std::optional<Response> get =
      TlsFetch(port, Client("client"), MakeRequest(http::verb::get, "/kv/m/x"), &error);
  ASSERT_TRUE(get.has_value()) << error;
  EXPECT_EQ(get->body(), "v5");
}

TEST_F(TlsTest, OptionalClientCertificateLetsAnonymousClientsIn) {
  StartGateway({.client_auth = "optional"});
  const std::uint16_t port = gateway_->traffic_port();
  std::string error;
  for (const char* name : {"", "client"}) {
    std::optional<Response> response =
        TlsFetch(port, Client(name), MakeRequest(http::verb::get, "/kv/o/missing"), &error);
    ASSERT_TRUE(response.has_value()) << name << ": " << error;
    EXPECT_EQ(response->result_int(), 404) << name;
  }
  // A certificate that is presented must still verify.
  EXPECT_FALSE(TlsFetch(port, Client("other_client"), MakeRequest(http::verb::get, "/kv/o/missing"))
                   .has_value());
  EXPECT_EQ(
      AwaitMetric("fencegate_tls_handshakes_total", R"(listener="traffic",result="unknown_ca")", 1),
      1.0);
  EXPECT_EQ(Handshakes("traffic", "ok"), 2.0);
}

TEST_F(TlsTest, TlsOnPlainPortIsRefusedAndCounted) {
  StartGateway({.traffic_tls = false});
  const std::uint16_t port = gateway_->traffic_port();
  EXPECT_FALSE(TlsFetch(port, Client(), MakeRequest(http::verb::get, "/kv/p/x")).has_value());

  // What the client does not see (it expected a ServerHello): a 400 before the close.
  HttpConnection raw;
  ASSERT_TRUE(raw.Connect(port)) << raw.error();
  ASSERT_TRUE(raw.WriteRaw(std::string("\x16\x03\x01\x00\x04\x01\x00\x00\x00", 9)));
  const std::string answer = raw.ReadUntilClose();
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 400 ")) << answer;
  EXPECT_NE(answer.find("tls-on-plain-port"), std::string::npos) << answer;

  EXPECT_EQ(AwaitMetric("fencegate_tls_on_plain_port_total", R"(listener="traffic")", 2), 2.0);
}

TEST_F(TlsTest, AdminListenerOverTls) {
  StartGateway({.traffic_tls = false, .admin_tls = true});
  // Plain HTTP on the TLS admin port: the same plain 400 as on the traffic port, then a close.
  std::string error;
  std::optional<Response> plain =
      Fetch(gateway_->admin_port(), MakeRequest(http::verb::get, "/healthz"), &error);
  ASSERT_TRUE(plain.has_value()) << error;
  EXPECT_EQ(plain->result_int(), 400);
  EXPECT_EQ((*plain)[http::field::content_type], "application/problem+json");
  EXPECT_NE(plain->body().find("plain-http-on-tls-port"), std::string::npos) << plain->body();
  EXPECT_FALSE(plain->keep_alive());

  std::optional<Response> metrics =
      TlsFetch(gateway_->admin_port(), Client(), MakeRequest(http::verb::get, "/metrics"), &error);
  ASSERT_TRUE(metrics.has_value()) << error;
  ASSERT_EQ(metrics->result_int(), 200);
  EXPECT_EQ(MetricValue(metrics->body(), "fencegate_tls_handshakes_total",
                        R"(listener="admin",result="plain_http")"),
            1.0);
  EXPECT_EQ(MetricValue(metrics->body(), "fencegate_tls_handshakes_total",
                        R"(listener="admin",result="ok")"),
            1.0);
}

// Clients keep writing on new connections while the certificate is replaced and SIGHUP sent,
// then a broken certificate is put in place and SIGHUP sent again: no request fails, new
// connections get the new certificate, the refused reload keeps it, and a connection opened
// before the reload is still answered.
TEST_F(TlsTest, CertificateReloadUnderLoadFailsNoRequest) {
  StartGateway({});
  const std::uint16_t port = gateway_->traffic_port();
  TlsConnection before(Client());
  ASSERT_TRUE(before.Connect(port)) << before.error();
  EXPECT_EQ(before.ServerCommonName(), "localhost");

  constexpr int kWriters = 2;
  constexpr int kRequestsPerWriter = 150;
  std::atomic<int> failures{0};
  std::atomic<int> done{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      const std::string target = "/kv/load" + std::to_string(w) + "/x";
      for (int i = 1; i <= kRequestsPerWriter; ++i) {
        std::string error;
        auto response = TlsFetch(port, Client(), PutRequest(target, i, "v"), &error);
        if (!response || response->result_int() / 100 != 2) {
          ++failures;
          std::fprintf(stderr, "writer %d request %d: %s\n", w, i,
                       response ? std::to_string(response->result_int()).c_str() : error.c_str());
        }
        ++done;
      }
    });
  }
  const auto replace = [&](const std::string& pem, const std::string& key) {
    // Written aside and renamed: a reload never reads a half-written file.
    std::filesystem::copy_file(pem, Cert("next.pem"));
    std::filesystem::copy_file(key, Cert("next.key"));
    std::filesystem::rename(Cert("next.pem"), Cert("live.pem"));
    std::filesystem::rename(Cert("next.key"), Cert("live.key"));
  };
  while (done.load() < kRequestsPerWriter / 2) std::this_thread::yield();
  replace(Cert("server2.pem"), Cert("server2.key"));
  gateway_->process().Signal(SIGHUP);
  EXPECT_EQ(AwaitMetric("fencegate_tls_reloads_total", R"(listener="traffic",result="ok")", 1),
            1.0);
  dir_.WriteFile("certs/broken.pem", "not a certificate\n");
  replace(Cert("broken.pem"), Cert("server2.key"));
  gateway_->process().Signal(SIGHUP);
  // A certificate that does not load fails the reload as a whole, as --check-config refuses it
  // (README "Reloading"): nothing changes, the certificate in force stays.
  EXPECT_EQ(AwaitMetric("fencegate_config_reloads_total", R"(result="failure")", 1), 1.0);
  for (auto& writer : writers) writer.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(done.load(), kWriters * kRequestsPerWriter);

  TlsConnection after(Client());
  ASSERT_TRUE(after.Connect(port)) << after.error();
  EXPECT_EQ(after.ServerCommonName(), "localhost-reissued");
  std::optional<Response> old = before.RoundTrip(MakeRequest(http::verb::get, "/kv/load0/x"));
  ASSERT_TRUE(old.has_value()) << before.error();
  EXPECT_EQ(old->result_int(), 200);
  EXPECT_NE(gateway_->process().Stderr().find("\"msg\":\"reload refused"), std::string::npos);
  EXPECT_NE(gateway_->process().Stderr().find("\"trigger\":\"SIGHUP\""), std::string::npos);
}

// The configurations are literal text: the errors' lines and columns in it are asserted.
TEST_F(TlsTest, ConfigAndCertificateErrorsNameTheirSource) {
  const std::string config_path = dir_.WriteFile(
      "bad.yaml", "tls:\n  traffic:\n    cert_file: " + Cert("server.pem") +
                      "\n    key_file: " + Cert("server.key") + "\n    client_auth: required\n" +
                      "backends:\n  files:\n    kind: filesystem\n    root: /tmp\n"
                      "routes:\n  - name: kv\n    prefix: /kv/\n    backend: files\n"
                      "    fence_key: \"kv:{segment:2}\"\n");
  const Finished check = RunFencegate({"--check-config", config_path});
  EXPECT_EQ(check.status, 1);
  EXPECT_NE(check.stderr_text.find("bad.yaml:5"), std::string::npos) << check.stderr_text;
  EXPECT_NE(check.stderr_text.find("tls.traffic.client_ca_file"), std::string::npos)
      << check.stderr_text;

  // A file that is not there: a configuration error at its key (exit 1), found by
  // --check-config already.
  std::filesystem::remove(Cert("live.pem"));
  const std::string missing = dir_.WriteFile(
      "missing.yaml", "tls:\n  traffic:\n    cert_file: " + Cert("live.pem") +
                          "\n    key_file: " + Cert("live.key") +
                          "\nbackends:\n  files:\n    kind: filesystem\n    root: /tmp\n"
                          "routes:\n  - name: kv\n    prefix: /kv/\n    backend: files\n"
                          "    fence_key: \"kv:{segment:2}\"\n");
  const Finished check_missing = RunFencegate({"--check-config", missing});
  EXPECT_EQ(check_missing.status, 1);
  EXPECT_NE(check_missing.stderr_text.find(
                "missing.yaml:3:16: tls.traffic.cert_file: cannot read '" + Cert("live.pem") + "'"),
            std::string::npos)
      << check_missing.stderr_text;

  // A file that is there but holds no certificate: a start-up failure naming it (exit 3).
  dir_.WriteFile("certs/live.pem", "not a certificate\n");
  const Finished start =
      RunFencegate({"--config", missing, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
                    "--data-dir", dir_.Join("data")});
  EXPECT_EQ(start.status, 3);
  EXPECT_NE(start.stderr_text.find(Cert("live.pem")), std::string::npos) << start.stderr_text;
}

}  // namespace
}  // namespace fencegate::integration
