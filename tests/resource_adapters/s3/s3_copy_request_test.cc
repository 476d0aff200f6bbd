#include "resource_adapters/s3/s3_copy_request.h"

#include <gtest/gtest.h>

namespace fencegate::adapters::s3 {
namespace {

namespace http = boost::beast::http;

TEST(S3CopyRequestTest, RecognisesACopy) {
  RequestHeader header;
  EXPECT_FALSE(IsCopyObject(header));
  header.set("X-Amz-Copy-Source", "/b/k");
  EXPECT_TRUE(IsCopyObject(header));
}

TEST(S3CopyRequestTest, ParsesTheCopySourceWithOrWithoutLeadingSlash) {
  for (std::string_view value : {"/src/dir/a%20b%2Bc", "src/dir/a%20b%2Bc"}) {
    S3Request source;
    ASSERT_FALSE(ParseCopySource(value, &source).has_value()) << value;
    EXPECT_EQ(source.operation, Operation::kRead);
    EXPECT_EQ(source.bucket, "src");
    EXPECT_EQ(source.key, "dir/a b+c");
    EXPECT_EQ(source.target, "/src/dir/a%20b%2Bc");
  }
  S3Request versioned;
  ASSERT_FALSE(ParseCopySource("/src/k?versionId=v1", &versioned).has_value());
  EXPECT_EQ(versioned.target, "/src/k?versionId=v1");
}

TEST(S3CopyRequestTest, RefusesACopySourceThatNamesNoObject) {
  for (std::string_view value : {"", "/", "/bucket", "/bucket/", "/b/%zz"}) {
    S3Request source;
    EXPECT_TRUE(ParseCopySource(value, &source).has_value()) << value;
  }
}

Fields SourceFields() {
  Fields source;
  source.set(http::field::content_type, "text/plain");
  source.set(http::field::cache_control, "no-cache");
  source.set("x-amz-meta-colour", "blue");
  source.set(kTokenMeta, "3");
  source.set(kTombstoneMeta, "1");
  source.set(http::field::etag, "\"abc\"");
  source.set(http::field::content_length, "5");
  return source;
}

// COPY (the default): the source's stored metadata replaces the client's, but never its
// fencing metadata; the copy's own fields stay.
TEST(S3CopyRequestTest, CopyDirectiveCarriesTheSourcesMetadataButNotItsToken) {
  RequestHeader header;
  header.set(http::field::content_type, "application/octet-stream");
  header.set("x-amz-meta-client", "ignored under COPY");
  header.set("x-amz-copy-source", "/b/src");
  CarryCopiedMetadata(SourceFields(), &header);
  EXPECT_EQ(header[http::field::content_type], "text/plain");
  EXPECT_EQ(header[http::field::cache_control], "no-cache");
  EXPECT_EQ(header["x-amz-meta-colour"], "blue");
  EXPECT_EQ(header.count("x-amz-meta-client"), 0u);
  EXPECT_EQ(header.count(kTokenMeta), 0u);
  EXPECT_EQ(header.count(kTombstoneMeta), 0u);
  EXPECT_EQ(header.count(http::field::etag), 0u);
  EXPECT_EQ(header.count(http::field::content_length), 0u);
  EXPECT_EQ(header["x-amz-copy-source"], "/b/src");
}

TEST(S3CopyRequestTest, ReplaceDirectiveKeepsTheClientsMetadata) {
  RequestHeader header;
  header.set(kMetadataDirective, "replace");
  header.set(http::field::content_type, "application/json");
  header.set("x-amz-meta-client", "kept");
  CarryCopiedMetadata(SourceFields(), &header);
  EXPECT_EQ(header[http::field::content_type], "application/json");
  EXPECT_EQ(header["x-amz-meta-client"], "kept");
  EXPECT_EQ(header.count("x-amz-meta-colour"), 0u);
}

TEST(S3CopyRequestTest, CopyAsPutDropsTheCopyFields) {
  RequestHeader header;
  header.set("x-amz-copy-source", "/b/src");
  header.set("x-amz-copy-source-if-match", "\"abc\"");
  header.set(kMetadataDirective, "COPY");
  header.set("x-amz-tagging-directive", "COPY");
  header.set("x-amz-meta-colour", "blue");
  EraseCopyFields(&header);
  EXPECT_EQ(header.count("x-amz-copy-source"), 0u);
  EXPECT_EQ(header.count("x-amz-copy-source-if-match"), 0u);
  EXPECT_EQ(header.count(kMetadataDirective), 0u);
  EXPECT_EQ(header.count("x-amz-tagging-directive"), 0u);
  EXPECT_EQ(header["x-amz-meta-colour"], "blue");
}

TEST(S3CopyRequestTest, ABackendCopyDropsOnlyTheSourceConditions) {
  RequestHeader header;
  header.set("x-amz-copy-source", "/b/src");
  header.set("X-Amz-Copy-Source-If-Match", "\"abc\"");
  header.set("x-amz-copy-source-if-unmodified-since", "Wed, 21 Oct 2015 07:28:00 GMT");
  header.set("x-amz-copy-source-version-id-marker", "kept");
  EraseCopySourceConditions(&header);
  EXPECT_EQ(header["x-amz-copy-source"], "/b/src");
  EXPECT_EQ(header.count("x-amz-copy-source-if-match"), 0u);
  EXPECT_EQ(header.count("x-amz-copy-source-if-unmodified-since"), 0u);
  EXPECT_EQ(header["x-amz-copy-source-version-id-marker"], "kept");
}

TEST(S3CopyRequestTest, CopySourceConditionsAreCheckedAgainstTheSource) {
  ObjectVersion source;
  source.exists = true;
  source.etag = "abc";
  RequestHeader header;
  EXPECT_TRUE(ClientPreconditionsHold(CopySourceConditions(header), source));
  header.set("x-amz-copy-source-if-match", "\"abc\"");
  EXPECT_TRUE(ClientPreconditionsHold(CopySourceConditions(header), source));
  header.set("x-amz-copy-source-if-match", "\"other\"");
  EXPECT_FALSE(ClientPreconditionsHold(CopySourceConditions(header), source));
  header.erase("x-amz-copy-source-if-match");
  header.set("x-amz-copy-source-if-none-match", "abc");
  EXPECT_FALSE(ClientPreconditionsHold(CopySourceConditions(header), source));
}

TEST(S3CopyRequestTest, CopyObjectResultQuotesTheEtag) {
  EXPECT_EQ(CopyObjectResultXml("\"9b2cf535f27731c974343645a3985328\"", 1255369830000),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><CopyObjectResult "
            "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><LastModified>"
            "2009-10-12T17:50:30.000Z</LastModified><ETag>&quot;"
            "9b2cf535f27731c974343645a3985328&quot;</ETag></CopyObjectResult>");
}

}  // namespace
}  // namespace fencegate::adapters::s3
