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

TEST(DavXmlTest, ProppatchStatusAndLockTokenHeader) {
  EXPECT_TRUE(ProppatchSucceeded("<D:status>HTTP/1.1 200 OK</D:status>"));
  EXPECT_FALSE(ProppatchSucceeded("<D:status>HTTP/1.1 423 Locked</D:status>"));
  EXPECT_EQ(ParseLockTokenHeader(" <opaquelocktoken:abc-1> "), "<opaquelocktoken:abc-1>");
  EXPECT_EQ(ParseLockTokenHeader("opaquelocktoken:abc"), std::nullopt);
  EXPECT_EQ(ParseLockTokenHeader("<a><b>"), std::nullopt);
}

}  // namespace
}  // namespace fencegate::adapters::webdav
