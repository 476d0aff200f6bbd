#include "resource_adapters/s3/s3_request.h"

#include <gtest/gtest.h>

namespace fencegate::adapters::s3 {
namespace {

namespace http = boost::beast::http;

TEST(S3RequestTest, ClassifiesOperations) {
  struct Case {
    http::verb method;
    std::string_view target;
    Operation operation;
  };
  const Case cases[] = {
      {http::verb::get, "/b/k", Operation::kRead},
      {http::verb::get, "/b?list-type=2", Operation::kRead},
      {http::verb::put, "/b/k", Operation::kPutObject},
      {http::verb::put, "/b", Operation::kOther},
      {http::verb::delete_, "/b/k", Operation::kDeleteObject},
      {http::verb::post, "/b/k?uploads", Operation::kCreateMultipart},
      {http::verb::put, "/b/k?partNumber=1&uploadId=u", Operation::kUploadPart},
      {http::verb::post, "/b/k?uploadId=u", Operation::kCompleteMultipart},
      {http::verb::delete_, "/b/k?uploadId=u", Operation::kAbortMultipart},
      {http::verb::post, "/b?delete", Operation::kMultiDelete},
  };
  for (const Case& c : cases) {
    S3Request request;
    ASSERT_FALSE(ParseS3Request(c.method, c.target, &request).has_value()) << c.target;
    EXPECT_EQ(request.operation, c.operation) << c.target;
  }
}

// The target sent is the one SigV4 signs: decoded, then encoded canonically, query sorted.
TEST(S3RequestTest, CanonicalisesTheTarget) {
  S3Request request;
  ASSERT_FALSE(ParseS3Request(http::verb::get, "/b/dir/a b%2Bc~!?uploadId=x%2Fy&a", &request));
  EXPECT_EQ(request.bucket, "b");
  EXPECT_EQ(request.key, "dir/a b+c~!");
  EXPECT_EQ(request.target, "/b/dir/a%20b%2Bc~%21?a=&uploadId=x%2Fy");
  EXPECT_TRUE(ParseS3Request(http::verb::get, "/b/%zz", &request).has_value());
  EXPECT_TRUE(ParseS3Request(http::verb::get, "/b/%2", &request).has_value());
  EXPECT_TRUE(ParseS3Request(http::verb::get, "b/k", &request).has_value());
}

// The key is decoded from the path, so it may carry markup: the 404 body escapes it.
TEST(S3RequestTest, NoSuchKeyBodyEscapesTheKey) {
  S3Request request;
  ASSERT_FALSE(ParseS3Request(http::verb::get, "/b%26/a%3C%26%22%27%3Eb", &request));
  EXPECT_EQ(request.key, "a<&\"'>b");
  EXPECT_EQ(NoSuchKeyXml(request),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>NoSuchKey</Code><Message>"
            "The specified key does not exist.</Message><Key>a&lt;&amp;&quot;&apos;&gt;b</Key>"
            "<BucketName>b&amp;</BucketName></Error>");
}

TEST(S3RequestTest, ReadsTheVersionFromFields) {
  Fields fields;
  fields.set(http::field::etag, "\"abc\"");
  fields.set("x-amz-meta-fencing-token", "42");
  ObjectVersion version = VersionFromFields(fields);
  EXPECT_TRUE(version.exists);
  EXPECT_FALSE(version.tombstone);
  EXPECT_EQ(version.etag, "abc");
  EXPECT_EQ(version.token, 42u);
  fields.set("x-amz-meta-fencing-token", "4x");
  fields.set("x-amz-meta-fencing-tombstone", "1");
  version = VersionFromFields(fields);
  EXPECT_EQ(version.token, 0u);
  EXPECT_TRUE(version.tombstone);
}

TEST(S3RequestTest, EvaluatesClientPreconditions) {
  const ObjectVersion live{true, false, "abc", 3};
  const ObjectVersion absent{};
  const ObjectVersion tombstone{true, true, "def", 4};
  Fields if_match;
  if_match.set(http::field::if_match, "\"xyz\", \"abc\"");
  EXPECT_TRUE(ClientPreconditionsHold(if_match, live));
  EXPECT_FALSE(ClientPreconditionsHold(if_match, absent));
  EXPECT_FALSE(ClientPreconditionsHold(if_match, tombstone));
  Fields create;
  create.set(http::field::if_none_match, "*");
  EXPECT_FALSE(ClientPreconditionsHold(create, live));
  EXPECT_TRUE(ClientPreconditionsHold(create, absent));
  EXPECT_TRUE(ClientPreconditionsHold(create, tombstone));
  EXPECT_TRUE(ClientPreconditionsHold(Fields{}, live));
}

}  // namespace
}  // namespace fencegate::adapters::s3
