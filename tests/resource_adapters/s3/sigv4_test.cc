#include "resource_adapters/s3/sigv4.h"

#include <gtest/gtest.h>

#include "base/encoding/sha256.h"
#include "resource_adapters/s3/s3_upstream.h"

namespace fencegate::adapters::s3 {
namespace {

namespace http = boost::beast::http;

// The credentials and time of the examples in AWS's "Signature Calculations for the
// Authorization Header: Transferring Payload in a Single Chunk (AWS Signature Version 4)".
const Credentials kExampleCredentials{"AKIAIOSFODNN7EXAMPLE",
                                      "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"};
constexpr std::string_view kExampleDate = "20130524T000000Z";
constexpr std::string_view kEmptySha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

// The documented "GET Object" example: the first 10 bytes of examplebucket/test.txt.
TEST(SigV4Test, AwsGetObjectExample) {
  RequestHeader header;
  header.method(http::verb::get);
  header.target("/test.txt");
  header.set(http::field::host, "examplebucket.s3.amazonaws.com");
  header.set(http::field::range, "bytes=0-9");
  header.set("X-Amz-Content-Sha256", kEmptySha256);
  header.set("X-Amz-Date", kExampleDate);

  std::string signed_headers;
  const std::string canonical = CanonicalRequest(header, kEmptySha256, &signed_headers);
  EXPECT_EQ(
      canonical,
      "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
      "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
      "x-amz-date:20130524T000000Z\n\nhost;range;x-amz-content-sha256;x-amz-date\n"
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(encoding::Sha256Hex(canonical),
            "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");

  SignV4(header, kExampleCredentials, "us-east-1", kExampleDate, kEmptySha256);
  EXPECT_EQ(header[http::field::authorization],
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

// The documented "GET Bucket (List Objects)" example: the query is sorted by name.
TEST(SigV4Test, AwsListObjectsExampleSortsTheQuery) {
  RequestHeader header;
  header.method(http::verb::get);
  header.target("/?prefix=J&max-keys=2");
  header.set(http::field::host, "examplebucket.s3.amazonaws.com");
  SignV4(header, kExampleCredentials, "us-east-1", kExampleDate, kEmptySha256);
  EXPECT_EQ(header[http::field::authorization],
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
            "SignedHeaders=host;x-amz-content-sha256;x-amz-date,"
            "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

// Fields outside SigV4's set (e.g. Via, added by the gateway) are not signed; x-amz-meta-* are.
TEST(SigV4Test, SignsAmzFieldsButNotProxyFields) {
  RequestHeader header;
  header.method(http::verb::put);
  header.target("/bucket/key");
  header.set(http::field::host, "127.0.0.1:7480");
  header.set(http::field::via, "1.1 fencegate");
  header.set("x-amz-meta-fencing-token", "7");
  SignV4(header, kExampleCredentials, "us-east-1", kExampleDate, kUnsignedPayload);
  EXPECT_NE(header[http::field::authorization].find(
                "SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-meta-fencing-token,"),
            std::string_view::npos)
      << header[http::field::authorization];
  EXPECT_EQ(header["X-Amz-Content-Sha256"], "UNSIGNED-PAYLOAD");
}

// The signed Host carries the port only when it is not the scheme's default, as AWS's SDKs send
// it, and brackets an IPv6 address.
TEST(SigV4Test, HostHeaderNamesThePortOnlyWhenNotTheDefault) {
  EXPECT_EQ(HostHeader("s3.example.org", 443, /*tls=*/true), "s3.example.org");
  EXPECT_EQ(HostHeader("s3.example.org", 80, /*tls=*/false), "s3.example.org");
  EXPECT_EQ(HostHeader("s3.example.org", 80, /*tls=*/true), "s3.example.org:80");
  EXPECT_EQ(HostHeader("127.0.0.1", 7480, /*tls=*/false), "127.0.0.1:7480");
  EXPECT_EQ(HostHeader("127.0.0.1", 443, /*tls=*/false), "127.0.0.1:443");
  EXPECT_EQ(HostHeader("::1", 8443, /*tls=*/true), "[::1]:8443");
  EXPECT_EQ(HostHeader("::1", 443, /*tls=*/true), "[::1]");
}

}  // namespace
}  // namespace fencegate::adapters::s3
