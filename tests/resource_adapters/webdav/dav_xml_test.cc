#include "resource_adapters/webdav/dav_xml.h"

#include <gtest/gtest.h>

namespace fencegate::adapters::webdav {
namespace {

using Kind = StoredToken::Kind;

// As Apache 2.4 mod_dav_fs answers a PROPFIND for the property.
constexpr std::string_view kApacheFound =
    "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
    "<D:multistatus xmlns:D=\"DAV:\" xmlns:ns1=\"urn:fencegate\" xmlns:ns0=\"DAV:\">\n"
    "<D:response xmlns:lp1=\"DAV:\" xmlns:ns1=\"urn:fencegate\">\n<D:href>/dav/a.txt</D:href>\n"
    "<D:propstat>\n<D:prop>\n<ns1:fencing-token>7</ns1:fencing-token>\n</D:prop>\n"
    "<D:status>HTTP/1.1 200 OK</D:status>\n</D:propstat>\n</D:response>\n</D:multistatus>\n";
constexpr std::string_view kApacheMissing =
    "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
    "<D:multistatus xmlns:D=\"DAV:\" xmlns:ns1=\"urn:fencegate\">\n"
    "<D:response xmlns:g0=\"urn:fencegate\">\n<D:href>/dav/</D:href>\n<D:propstat>\n"
    "<D:prop>\n<g0:fencing-token/>\n</D:prop>\n<D:status>HTTP/1.1 404 Not Found</D:status>\n"
    "</D:propstat>\n</D:response>\n</D:multistatus>\n";

TEST(DavXmlTest, ReadsTheStoredTokenAsApacheReportsIt) {
  const StoredToken found = ParseStoredToken(kApacheFound);
  EXPECT_EQ(found.kind, Kind::kValue);
  EXPECT_EQ(found.value, 7u);
  EXPECT_EQ(ParseStoredToken(kApacheMissing).kind, Kind::kAbsent);
}

TEST(DavXmlTest, AcceptsADefaultNamespaceAndIgnoresOtherNamespaces) {
  const StoredToken found =
      ParseStoredToken("<m><p><fencing-token xmlns=\"urn:fencegate\"> 42 </fencing-token></p></m>");
  EXPECT_EQ(found.kind, Kind::kValue);
  EXPECT_EQ(found.value, 42u);
  EXPECT_EQ(
      ParseStoredToken("<m xmlns:x=\"urn:other\"><x:fencing-token>9</x:fencing-token></m>").kind,
      Kind::kAbsent);
}

TEST(DavXmlTest, ContentThatIsNotATokenIsMalformed) {
  for (std::string_view value : {"abc", "-1", "7x", "99999999999999999999999"}) {
    const std::string document = "<m xmlns:f=\"urn:fencegate\"><f:fencing-token>" +
                                 std::string(value) + "</f:fencing-token></m>";
    EXPECT_EQ(ParseStoredToken(document).kind, Kind::kMalformed) << value;
  }
}

TEST(DavXmlTest, BodiesCarryTheNamespaceAndToken) {
  const std::string patch = ProppatchTokenBody(12);
  EXPECT_NE(patch.find("xmlns:F=\"urn:fencegate\""), std::string::npos);
  EXPECT_NE(patch.find("<F:fencing-token>12</F:fencing-token>"), std::string::npos);
  EXPECT_NE(PropfindTokenBody().find("fencing-token"), std::string::npos);
  EXPECT_NE(LockRequestBody().find("<D:exclusive/>"), std::string::npos);
}

TEST(DavXmlTest, ReadsTheTokenUnderAnyPrefixOrTheDefaultNamespace) {
  // Another prefix for DAV: and for the token namespace, declared on the response element.
  const StoredToken prefixed = ParseStoredToken(
      "<a:multistatus xmlns:a=\"DAV:\"><a:response xmlns:t=\"urn:fencegate\"><a:href>/x</a:href>"
      "<a:propstat><a:prop><t:fencing-token>11</t:fencing-token></a:prop>"
      "<a:status>HTTP/1.1 200 OK</a:status></a:propstat></a:response></a:multistatus>");
  EXPECT_EQ(prefixed.kind, Kind::kValue);
  EXPECT_EQ(prefixed.value, 11u);
  // DAV: as the default namespace, the token namespace rebinding the same prefix below.
  const StoredToken defaulted = ParseStoredToken(
      "<multistatus xmlns=\"DAV:\"><response><propstat><prop>"
      "<fencing-token xmlns=\"urn:fencegate\">12</fencing-token></prop>"
      "<status>HTTP/1.1 200 OK</status></propstat></response></multistatus>");
  EXPECT_EQ(defaulted.kind, Kind::kValue);
  EXPECT_EQ(defaulted.value, 12u);
  // The right local name in DAV: (not the token namespace) is someone else's property.
  EXPECT_EQ(ParseStoredToken("<D:multistatus xmlns:D=\"DAV:\"><D:fencing-token>3</D:fencing-token>"
                             "</D:multistatus>")
                .kind,
            Kind::kAbsent);
}

TEST(DavXmlTest, APropertyUnderAFailingPropstatIsAbsent) {
  // One propstat 200 with another property, the token's under 403 next to it.
  const std::string_view document =
      "<D:multistatus xmlns:D=\"DAV:\" xmlns:F=\"urn:fencegate\"><D:response>"
      "<D:href>/dav/a</D:href>"
      "<D:propstat><D:prop><D:getetag>\"e\"</D:getetag></D:prop>"
      "<D:status>HTTP/1.1 200 OK</D:status></D:propstat>"
      "<D:propstat><D:prop><F:fencing-token>9</F:fencing-token></D:prop>"
      "<D:status>HTTP/1.1 403 Forbidden</D:status></D:propstat></D:response></D:multistatus>";
  EXPECT_EQ(ParseStoredToken(document).kind, Kind::kAbsent);
}

TEST(DavXmlTest, MalformedXmlIsUnreadable) {
  for (std::string_view document :
       {"", "<D:multistatus xmlns:D=\"DAV:\">", "<D:multistatus><D:fencing-token/>",
        "<m xmlns:f=\"urn:fencegate\"><f:fencing-token>1</m>", "not xml at all",
        "<m xmlns:f=\"urn:fencegate\"><f:fencing-token>1</f:fencing-token></m><second/>"}) {
    EXPECT_EQ(ParseStoredToken(document).kind, Kind::kUnreadable) << document;
    EXPECT_FALSE(ProppatchSucceeded(document)) << document;
    EXPECT_FALSE(MultistatusReportsLocked(document)) << document;
  }
}

// As Apache 2.4 mod_dav_fs answers a PROPPATCH of the property, and as it answers one it refuses.
constexpr std::string_view kApacheProppatched =
    "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
    "<D:multistatus xmlns:D=\"DAV:\" xmlns:ns1=\"urn:fencegate\">\n"
    "<D:response><D:href>/dav/a.txt</D:href>\n<D:propstat><D:prop><ns1:fencing-token/></D:prop>\n"
    "<D:status>HTTP/1.1 200 OK</D:status>\n</D:propstat>\n</D:response>\n</D:multistatus>\n";

TEST(DavXmlTest, ProppatchSucceedsOnlyWhenEveryPropstatDid) {
  EXPECT_TRUE(ProppatchSucceeded(kApacheProppatched));
  EXPECT_TRUE(ProppatchSucceeded(
      "<x:multistatus xmlns:x=\"DAV:\"><x:response><x:propstat><x:prop>"
      "<member-61 xmlns=\"urn:fencegate\"/></x:prop><x:status>HTTP/1.1 200 OK</x:status>"
      "</x:propstat></x:response></x:multistatus>",
      "member-61"));
  // Another property's propstat set, this one's not listed at all.
  EXPECT_FALSE(ProppatchSucceeded(kApacheProppatched, "member-61"));
  // A 200 propstat next to a failing one: PROPPATCH is all or nothing, so nothing was set.
  EXPECT_FALSE(ProppatchSucceeded(
      "<D:multistatus xmlns:D=\"DAV:\" xmlns:F=\"urn:fencegate\"><D:response>"
      "<D:propstat><D:prop><F:fencing-token/></D:prop><D:status>HTTP/1.1 200 OK</D:status>"
      "</D:propstat><D:propstat><D:prop><F:other/></D:prop>"
      "<D:status>HTTP/1.1 424 Failed Dependency</D:status></D:propstat>"
      "</D:response></D:multistatus>"));
  EXPECT_FALSE(ProppatchSucceeded(
      "<D:multistatus xmlns:D=\"DAV:\" xmlns:F=\"urn:fencegate\"><D:response>"
      "<D:propstat><D:prop><F:fencing-token/></D:prop><D:status>HTTP/1.1 423 Locked</D:status>"
      "</D:propstat></D:response></D:multistatus>"));
  // A whole-resource failure instead of propstats.
  EXPECT_FALSE(
      ProppatchSucceeded("<D:multistatus xmlns:D=\"DAV:\"><D:response><D:href>/dav/a.txt</D:href>"
                         "<D:status>HTTP/1.1 423 Locked</D:status></D:response></D:multistatus>"));
  // The status text alone, as the string search once accepted it, is not a multistatus.
  EXPECT_FALSE(ProppatchSucceeded("<D:status>HTTP/1.1 200 OK</D:status>"));
}

TEST(DavXmlTest, ALockMultistatusReportsLockedWhereverA423Stands) {
  EXPECT_TRUE(
      MultistatusReportsLocked("<multistatus xmlns=\"DAV:\"><response><href>/dav/</href>"
                               "<status>HTTP/1.1 423 Locked</status></response></multistatus>"));
  EXPECT_TRUE(MultistatusReportsLocked(
      "<q:multistatus xmlns:q=\"DAV:\"><q:response><q:href>/dav/a</q:href><q:propstat>"
      "<q:prop><q:lockdiscovery/></q:prop><q:status>HTTP/1.1 423 Locked</q:status>"
      "</q:propstat></q:response></q:multistatus>"));
  // " 423 " in a name or an href is not a status.
  EXPECT_FALSE(MultistatusReportsLocked(
      "<D:multistatus xmlns:D=\"DAV:\"><D:response><D:href>/dav/a 423 b</D:href>"
      "<D:status>HTTP/1.1 424 Failed Dependency</D:status></D:response></D:multistatus>"));
}

// As Apache 2.4 mod_dav_fs answers a LOCK.
constexpr std::string_view kApacheLocked =
    "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
    "<D:prop xmlns:D=\"DAV:\"><D:lockdiscovery>\n<D:activelock>\n<D:locktype><D:write/>"
    "</D:locktype>\n<D:lockscope><D:exclusive/></D:lockscope>\n<D:depth>0</D:depth>\n"
    "<D:owner>fencegate</D:owner>\n<D:timeout>Second-60</D:timeout>\n<D:locktoken>\n"
    "<D:href>opaquelocktoken:1b2c3d4e-aaaa-bbbb-cccc-0123456789ab</D:href>\n</D:locktoken>\n"
    "</D:activelock>\n</D:lockdiscovery>\n</D:prop>\n";

TEST(DavXmlTest, LockTokenFromTheHeaderOrTheLockdiscovery) {
  EXPECT_EQ(ParseLockTokenHeader(" <opaquelocktoken:abc-1> "), "<opaquelocktoken:abc-1>");
  EXPECT_EQ(ParseLockTokenHeader("opaquelocktoken:abc"), std::nullopt);
  EXPECT_EQ(ParseLockTokenHeader("<a><b>"), std::nullopt);
  EXPECT_EQ(ParseLockDiscoveryToken(kApacheLocked),
            "<opaquelocktoken:1b2c3d4e-aaaa-bbbb-cccc-0123456789ab>");
  EXPECT_EQ(ParseLockDiscoveryToken("<p:prop xmlns:p=\"DAV:\"><p:lockdiscovery><p:activelock>"
                                    "<p:locktoken><p:href>urn:uuid:7</p:href></p:locktoken>"
                                    "</p:activelock></p:lockdiscovery></p:prop>"),
            "<urn:uuid:7>");
  // Two active locks (shared ones): which is ours cannot be told.
  EXPECT_EQ(ParseLockDiscoveryToken(
                "<D:prop xmlns:D=\"DAV:\"><D:lockdiscovery>"
                "<D:activelock><D:locktoken><D:href>urn:a</D:href></D:locktoken></D:activelock>"
                "<D:activelock><D:locktoken><D:href>urn:b</D:href></D:locktoken></D:activelock>"
                "</D:lockdiscovery></D:prop>"),
            std::nullopt);
  EXPECT_EQ(ParseLockDiscoveryToken("<D:prop xmlns:D=\"DAV:\"><D:lockdiscovery/></D:prop>"),
            std::nullopt);
  EXPECT_EQ(ParseLockDiscoveryToken("<D:prop xmlns:D=\"urn:not-dav\"><D:lockdiscovery>"
                                    "<D:activelock><D:locktoken><D:href>urn:a</D:href>"
                                    "</D:locktoken></D:activelock></D:lockdiscovery></D:prop>"),
            std::nullopt);
  EXPECT_EQ(ParseLockDiscoveryToken("<D:prop xmlns:D=\"DAV:\"><D:lockdiscovery>"), std::nullopt);
}

// Apache 2.4's answer to a PROPFIND of DAV:lockdiscovery (as captured), and the cases around it.
TEST(DavXml, ActiveLocksOfAPropfind) {
  const std::string apache =
      "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
      "<D:multistatus xmlns:D=\"DAV:\" xmlns:ns0=\"DAV:\">\n<D:response>\n"
      "<D:href>/dav/doc.txt</D:href>\n<D:propstat>\n<D:prop>\n<D:lockdiscovery><D:activelock>\n"
      "<D:locktype><D:write/></D:locktype>\n<D:lockscope><D:exclusive/></D:lockscope>\n"
      "<D:depth>infinity</D:depth>\n"
      "<ns0:owner xmlns:ns0=\"DAV:\">fencegate-write 0123456789abcdef</ns0:owner>"
      "<D:timeout>Second-300</D:timeout>\n<D:locktoken>\n"
      "<D:href>opaquelocktoken:4f644d09-5dde-4f21-928c-b3980b882fdd</D:href>\n"
      "</D:locktoken>\n</D:activelock>\n</D:lockdiscovery>\n</D:prop>\n"
      "<D:status>HTTP/1.1 200 OK</D:status>\n</D:propstat>\n</D:response>\n</D:multistatus>\n";
  const std::vector<ActiveLock> locks = ParseActiveLocks(apache);
  ASSERT_EQ(locks.size(), 1u);
  EXPECT_EQ(locks[0].token, "<opaquelocktoken:4f644d09-5dde-4f21-928c-b3980b882fdd>");
  EXPECT_EQ(locks[0].owner, "fencegate-write 0123456789abcdef");

  EXPECT_TRUE(ParseActiveLocks("<D:multistatus xmlns:D=\"DAV:\"><D:response><D:href>/dav/</D:href>"
                               "<D:propstat><D:prop><D:lockdiscovery/></D:prop>"
                               "<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
                               "</D:multistatus>")
                  .empty());
  // Under a failed propstat, without a token, or unreadable: nothing to act on.
  EXPECT_TRUE(ParseActiveLocks("<D:multistatus xmlns:D=\"DAV:\"><D:response><D:propstat><D:prop>"
                               "<D:lockdiscovery><D:activelock><D:locktoken><D:href>urn:a</D:href>"
                               "</D:locktoken></D:activelock></D:lockdiscovery></D:prop>"
                               "<D:status>HTTP/1.1 403 Forbidden</D:status></D:propstat>"
                               "</D:response></D:multistatus>")
                  .empty());
  EXPECT_TRUE(ParseActiveLocks("<D:multistatus xmlns:D=\"DAV:\"><D:response><D:propstat><D:prop>"
                               "<D:lockdiscovery><D:activelock><D:owner>x</D:owner></D:activelock>"
                               "</D:lockdiscovery></D:prop><D:status>HTTP/1.1 200 OK</D:status>"
                               "</D:propstat></D:response></D:multistatus>")
                  .empty());
  EXPECT_TRUE(ParseActiveLocks("<D:multistatus xmlns:D=\"DAV:\">").empty());
  // A lock without an owner is reported with an empty one (never the gateway's mark).
  const auto ownerless = ParseActiveLocks(
      "<D:multistatus xmlns:D=\"DAV:\"><D:response><D:propstat><D:prop><D:lockdiscovery>"
      "<D:activelock><D:locktoken><D:href>urn:b</D:href></D:locktoken></D:activelock>"
      "</D:lockdiscovery></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>"
      "</D:response></D:multistatus>");
  ASSERT_EQ(ownerless.size(), 1u);
  EXPECT_EQ(ownerless[0].token, "<urn:b>");
  EXPECT_EQ(ownerless[0].owner, "");
}

TEST(DavXml, LockRequestCarriesTheOwnerMark) {
  EXPECT_NE(LockRequestBody("fencegate-write 00ff").find("<D:owner>fencegate-write 00ff</D:owner>"),
            std::string::npos);
}

}  // namespace
}  // namespace fencegate::adapters::webdav
