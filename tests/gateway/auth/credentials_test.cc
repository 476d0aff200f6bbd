#include "gateway/auth/credentials.h"

#include <gtest/gtest.h>

#include "gateway/auth/api_key.h"
#include "gateway/auth/peer_match.h"

namespace fencegate::gateway::auth {
namespace {

using Kind = Authentication::Kind;

CredentialsConfig TwoPrincipals() {
  CredentialsConfig config;
  PrincipalConfig& reader = config.principals.emplace_back();
  reader.name = "reader";
  reader.api_key_sha256 = {DigestApiKey("reader-key")};
  PrincipalConfig& writer = config.principals.emplace_back();
  writer.name = "writer";
  writer.api_key_sha256 = {DigestApiKey("writer-key-1"), DigestApiKey("writer-key-2")};
  writer.tls_subjects = {"CN=writer-1,O=example"};
  writer.tls_dns_sans = {"writer.example.org"};
  writer.tls_uri_sans = {"spiffe://example.org/writer"};
  return config;
}

PeerIdentity Verified() {
  PeerIdentity peer;
  peer.verified = true;
  return peer;
}

TEST(CredentialsTest, BearerKeysIdentifyTheirPrincipal) {
  const Credentials credentials(TwoPrincipals());
  auto who = credentials.Authenticate("Bearer reader-key", 1, nullptr);
  ASSERT_EQ(who.kind, Kind::kAuthenticated);
  EXPECT_EQ(credentials.name(who.principal), "reader");
  for (const char* field : {"Bearer writer-key-1", "bearer writer-key-2"}) {
    who = credentials.Authenticate(field, 1, nullptr);
    ASSERT_EQ(who.kind, Kind::kAuthenticated) << field;
    EXPECT_EQ(credentials.name(who.principal), "writer") << field;
  }
}

TEST(CredentialsTest, MissingAndInvalidCredentials) {
  const Credentials credentials(TwoPrincipals());
  EXPECT_EQ(credentials.Authenticate("", 0, nullptr).kind, Kind::kNone);
  EXPECT_EQ(credentials.Authenticate("Bearer nobody", 1, nullptr).kind, Kind::kInvalid);
  EXPECT_EQ(credentials.Authenticate("Bearer reader-key ", 1, nullptr).kind, Kind::kInvalid);
  EXPECT_EQ(credentials.Authenticate("Basic cmVhZGVyLWtleQ==", 1, nullptr).kind, Kind::kInvalid);
  // Two Authorization fields: ambiguous, even if one is right.
  EXPECT_EQ(credentials.Authenticate("Bearer reader-key", 2, nullptr).kind, Kind::kInvalid);
}

TEST(CredentialsTest, VerifiedCertificateBySubjectOrSan) {
  const Credentials credentials(TwoPrincipals());
  PeerIdentity by_subject = Verified();
  by_subject.subject = "CN=writer-1,O=example";
  PeerIdentity by_dns = Verified();
  by_dns.subject = "CN=someone-else";
  by_dns.dns_sans = {"other.example.org", "WRITER.example.ORG"};
  PeerIdentity by_uri = Verified();
  by_uri.uri_sans = {"spiffe://example.org/writer"};
  for (const PeerIdentity* peer : {&by_subject, &by_dns, &by_uri}) {
    const auto who = credentials.Authenticate("", 0, peer);
    ASSERT_EQ(who.kind, Kind::kAuthenticated);
    EXPECT_EQ(credentials.name(who.principal), "writer");
  }
}

TEST(CredentialsTest, CertificatesThatIdentifyNobody) {
  const Credentials credentials(TwoPrincipals());
  PeerIdentity unverified;  // the chain did not verify: nothing it says counts
  unverified.subject = "CN=writer-1,O=example";
  EXPECT_EQ(credentials.Authenticate("", 0, &unverified).kind, Kind::kNone);

  PeerIdentity unknown = Verified();
  unknown.subject = "CN=writer-1,O=example,OU=x";      // subjects compare exactly
  unknown.uri_sans = {"spiffe://example.org/Writer"};  // URI SANs compare exactly
  EXPECT_EQ(credentials.Authenticate("", 0, &unknown).kind, Kind::kInvalid);
}

TEST(CredentialsTest, ABearerKeyDecidesEvenWithAGoodCertificate) {
  const Credentials credentials(TwoPrincipals());
  PeerIdentity writer = Verified();
  writer.subject = "CN=writer-1,O=example";
  auto who = credentials.Authenticate("Bearer reader-key", 1, &writer);
  ASSERT_EQ(who.kind, Kind::kAuthenticated);
  EXPECT_EQ(credentials.name(who.principal), "reader");
  EXPECT_EQ(credentials.Authenticate("Bearer wrong", 1, &writer).kind, Kind::kInvalid);
}

TEST(PeerMatchTest, EmptySubjectMatchesNoEmptyEntry) {
  PrincipalConfig principal;
  principal.name = "p";
  principal.tls_subjects = {""};
  PeerIdentity peer = Verified();
  EXPECT_FALSE(PeerMatches(peer, principal));
}

}  // namespace
}  // namespace fencegate::gateway::auth
