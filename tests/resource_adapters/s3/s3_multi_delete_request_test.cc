#include "resource_adapters/s3/s3_multi_delete_request.h"

#include <string>

#include <gtest/gtest.h>

namespace fencegate::adapters::s3 {
namespace {

TEST(MultiDeleteRequestTest, ReadsKeysInOrderOnceAndQuiet) {
  MultiDeleteRequest parsed;
  const auto error = ParseMultiDelete(
      "<?xml version=\"1.0\"?><Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Quiet>true</Quiet><Object><Key>b &amp; c</Key></Object><Object><Key>a</Key></Object>"
      "<Object><Key>b &amp; c</Key></Object></Delete>",
      &parsed);
  ASSERT_FALSE(error.has_value()) << *error;
  EXPECT_TRUE(parsed.quiet);
  EXPECT_EQ(parsed.keys, (std::vector<std::string>{"b & c", "a"}));

  // Without S3's namespace too (hand-written requests).
  ASSERT_FALSE(ParseMultiDelete("<Delete><Object><Key>x</Key></Object></Delete>", &parsed));
  EXPECT_FALSE(parsed.quiet);
  EXPECT_EQ(parsed.keys, (std::vector<std::string>{"x"}));
}

TEST(MultiDeleteRequestTest, RefusesWhatCannotBeFenced) {
  MultiDeleteRequest parsed;
  EXPECT_TRUE(ParseMultiDelete("not xml", &parsed));
  EXPECT_TRUE(ParseMultiDelete("<Remove><Object><Key>x</Key></Object></Remove>", &parsed));
  EXPECT_TRUE(ParseMultiDelete("<Delete></Delete>", &parsed));
  EXPECT_TRUE(ParseMultiDelete("<Delete><Object><Key></Key></Object></Delete>", &parsed));
  const auto version = ParseMultiDelete(
      "<Delete><Object><Key>x</Key><VersionId>v1</VersionId></Object></Delete>", &parsed);
  ASSERT_TRUE(version.has_value());
  EXPECT_NE(version->find("VersionId"), std::string::npos);
  std::string many = "<Delete>";
  for (std::size_t i = 0; i <= kMaxMultiDeleteKeys; ++i) {
    many += "<Object><Key>k" + std::to_string(i) + "</Key></Object>";
  }
  EXPECT_TRUE(ParseMultiDelete(many + "</Delete>", &parsed));
}

TEST(MultiDeleteRequestTest, DeleteResultListsDeletedUnlessQuietAndEveryError) {
  const std::vector<KeyDeleteOutcome> outcomes = {
      {.key = "a<b", .deleted = true},
      {.key = "c", .deleted = false, .code = "PreconditionFailed", .message = "higher & newer"}};
  const std::string loud = DeleteResultXml(outcomes, false);
  EXPECT_NE(loud.find("<Deleted><Key>a&lt;b</Key></Deleted>"), std::string::npos) << loud;
  EXPECT_NE(loud.find("<Error><Key>c</Key><Code>PreconditionFailed</Code>"
                      "<Message>higher &amp; newer</Message></Error>"),
            std::string::npos)
      << loud;
  const std::string quiet = DeleteResultXml(outcomes, true);
  EXPECT_EQ(quiet.find("<Deleted>"), std::string::npos) << quiet;
  EXPECT_NE(quiet.find("<Error>"), std::string::npos) << quiet;
}

}  // namespace
}  // namespace fencegate::adapters::s3
