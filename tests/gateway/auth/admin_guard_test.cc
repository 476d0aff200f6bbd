#include "gateway/auth/admin_guard.h"

#include <gtest/gtest.h>

#include "gateway/auth/api_key.h"

namespace fencegate::gateway::auth {
namespace {

using Via = AdminGuard::Via;

AdminAuthConfig OneAdmin() {
  AdminAuthConfig config;
  PrincipalConfig& admin = config.credentials.principals.emplace_back();
  admin.name = "alice";
  admin.api_key_sha256 = {DigestApiKey("alice-key")};
  admin.tls_subjects = {"CN=alice"};
  return config;
}

TEST(AdminGuardTest, AConsoleSessionOfAConfiguredAdminIsLetIn) {
  prometheus::Registry registry;
  const AdminGuard guard(OneAdmin(), registry);
  const AdminGuard::Result result = guard.Check("/admin/summary", "", 0, nullptr, "alice");
  EXPECT_EQ(result.status, 0u);
  EXPECT_EQ(result.principal, "alice");
  EXPECT_EQ(result.via, Via::kCookie);
}

TEST(AdminGuardTest, ASessionOfAPrincipalNoLongerConfiguredIsRefused) {
  prometheus::Registry registry;
  const AdminGuard guard(OneAdmin(), registry);
  const AdminGuard::Result result = guard.Check("/admin/summary", "", 0, nullptr, "mallory");
  EXPECT_EQ(result.status, 401u);
  EXPECT_EQ(result.reason, "missing_credentials");
}

TEST(AdminGuardTest, ABearerKeyDecidesOverACookie) {
  prometheus::Registry registry;
  const AdminGuard guard(OneAdmin(), registry);
  AdminGuard::Result result = guard.Check("/admin/summary", "Bearer wrong", 1, nullptr, "alice");
  EXPECT_EQ(result.status, 401u) << "a wrong key is not rescued by a session";
  EXPECT_EQ(result.reason, "invalid_credentials");
  result = guard.Check("/admin/summary", "Bearer alice-key", 1, nullptr, "alice");
  EXPECT_EQ(result.status, 0u);
  EXPECT_EQ(result.via, Via::kBearer);
}

TEST(AdminGuardTest, AnAdminCertificateIsEnoughByItself) {
  prometheus::Registry registry;
  const AdminGuard guard(OneAdmin(), registry);
  PeerIdentity peer;
  peer.verified = true;
  peer.subject = "CN=alice";
  const AdminGuard::Result result = guard.Check("/admin/events", "", 0, &peer);
  EXPECT_EQ(result.status, 0u);
  EXPECT_EQ(result.principal, "alice");
  EXPECT_EQ(result.via, Via::kCertificate);
}

TEST(AdminGuardTest, WithoutAdminPrincipalsEverythingIsOpen) {
  prometheus::Registry registry;
  const AdminGuard guard(AdminAuthConfig{}, registry);
  EXPECT_FALSE(guard.enabled());
  const AdminGuard::Result result = guard.Check("/admin/events", "", 0, nullptr);
  EXPECT_EQ(result.status, 0u);
  EXPECT_EQ(result.via, Via::kOpen);
}

TEST(AdminGuardTest, PrincipalOfKeyNamesTheKeysOwnerOnly) {
  prometheus::Registry registry;
  const AdminGuard guard(OneAdmin(), registry);
  EXPECT_TRUE(guard.enabled());
  EXPECT_EQ(guard.PrincipalOfKey("alice-key"), "alice");
  EXPECT_EQ(guard.PrincipalOfKey("bob-key"), std::nullopt);
  EXPECT_EQ(guard.PrincipalOfKey(""), std::nullopt);
}

}  // namespace
}  // namespace fencegate::gateway::auth
