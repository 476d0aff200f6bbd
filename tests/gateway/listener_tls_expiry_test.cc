#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <memory>
#include <string>

#include <prometheus/text_serializer.h>

#include "gateway/tls/listener_tls.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace fencegate::gateway::tls {
namespace {

using integration::Process;
using integration::TempDir;

// A self-signed certificate valid for `days` from now, as listener.pem and listener.key.
void WriteCertificate(const TempDir& dir, int days) {
  std::string error;
  auto openssl = Process::Start(
      {"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
       "-nodes", "-keyout", dir.Join("listener.key"), "-out", dir.Join("listener.pem"), "-subj",
       "/CN=localhost", "-days", std::to_string(days)},
      &error);
  ASSERT_NE(openssl, nullptr) << error;
  ASSERT_EQ(openssl->Wait(std::chrono::seconds(60)), 0) << openssl->Stderr();
}

// The value of fencegate_tls_certificate_expiry_timestamp_seconds{listener="traffic"}, or -1.
double ExpiryGauge(prometheus::Registry& registry) {
  const std::string text = prometheus::TextSerializer().Serialize(registry.Collect());
  const std::string series =
      "fencegate_tls_certificate_expiry_timestamp_seconds{listener=\"traffic\"} ";
  const std::size_t at = text.find(series);
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size()));
}

double DaysFromNow(int days) { return static_cast<double>(std::time(nullptr) + days * 86400); }

class ListenerTlsExpiryTest : public ::testing::Test {
 protected:
  ServerTlsSettings Settings() const {
    ServerTlsSettings settings;
    settings.enabled = true;
    settings.cert_file = dir_.Join("listener.pem");
    settings.key_file = dir_.Join("listener.key");
    return settings;
  }

  TempDir dir_;
  prometheus::Registry registry_;
};

TEST_F(ListenerTlsExpiryTest, TheGaugeFollowsTheLoadedCertificateAcrossReloads) {
  WriteCertificate(dir_, 10);
  ListenerTls listener("traffic", Settings(), registry_);
  ASSERT_TRUE(listener.Load().ok());
  EXPECT_NEAR(ExpiryGauge(registry_), DaysFromNow(10), 120);

  WriteCertificate(dir_, 3);
  ASSERT_TRUE(listener.Reload());
  EXPECT_NEAR(ExpiryGauge(registry_), DaysFromNow(3), 120);

  // A reload that fails keeps the old context, and the gauge keeps describing it.
  dir_.WriteFile("listener.pem", "not a certificate");
  EXPECT_FALSE(listener.Reload());
  EXPECT_NEAR(ExpiryGauge(registry_), DaysFromNow(3), 120);
}

TEST_F(ListenerTlsExpiryTest, APlainListenerHasNoExpirySeries) {
  ListenerTls listener("traffic", ServerTlsSettings{}, registry_);
  ASSERT_TRUE(listener.Load().ok());
  EXPECT_EQ(ExpiryGauge(registry_), -1);
}

}  // namespace
}  // namespace fencegate::gateway::tls
