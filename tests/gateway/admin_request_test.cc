#include "gateway/admin/admin_request.h"

#include <gtest/gtest.h>

namespace fencegate::gateway {
namespace {

TEST(AdminQueryTest, DecodesTheParametersAnEndpointTakes) {
  std::string error;
  const auto query =
      AdminQuery::Parse("prefix=kv%3Aa+b&limit=5&&after=", {"prefix", "limit", "after"}, &error);
  ASSERT_TRUE(query.has_value()) << error;
  EXPECT_EQ(query->Value("prefix"), "kv:a+b");  // '+' is not a space: keys are paths
  ASSERT_NE(query->Find("after"), nullptr);
  EXPECT_EQ(*query->Find("after"), "");
  EXPECT_EQ(query->Find("missing"), nullptr);
  EXPECT_EQ(query->Value("missing"), "");
  EXPECT_EQ(query->Limit(&error), 5u);
}

TEST(AdminQueryTest, RefusesUnknownRepeatedAndBadlyEncodedParametersByName) {
  std::string error;
  EXPECT_FALSE(AdminQuery::Parse("limit=1&bogus=2", {"limit"}, &error));
  EXPECT_NE(error.find("'bogus'"), std::string::npos) << error;
  EXPECT_NE(error.find("limit"), std::string::npos) << error;
  EXPECT_FALSE(AdminQuery::Parse("x", {}, &error));
  EXPECT_NE(error.find("takes none"), std::string::npos) << error;
  EXPECT_FALSE(AdminQuery::Parse("limit=1&limit=2", {"limit"}, &error));
  EXPECT_NE(error.find("repeated"), std::string::npos) << error;
  EXPECT_FALSE(AdminQuery::Parse("prefix=%zz", {"prefix"}, &error));
  EXPECT_NE(error.find("percent-encoded"), std::string::npos) << error;
  EXPECT_TRUE(AdminQuery::Parse("", {}, &error));
}

TEST(AdminQueryTest, LimitIsOneToAThousandAndDefaultsToAHundred) {
  std::string error;
  EXPECT_EQ(AdminQuery::Parse("", {"limit"}, &error)->Limit(&error), 100u);
  EXPECT_EQ(AdminQuery::Parse("limit=1000", {"limit"}, &error)->Limit(&error), 1000u);
  for (const char* bad : {"limit=0", "limit=1001", "limit=-1", "limit=5x", "limit="}) {
    EXPECT_FALSE(AdminQuery::Parse(bad, {"limit"}, &error)->Limit(&error).has_value()) << bad;
  }
}

TEST(AdminQueryTest, TimesAreRfc3339OrUnixMilliseconds) {
  EXPECT_EQ(ParseTimeParameter("1700000000123"), 1700000000123);
  EXPECT_EQ(ParseTimeParameter("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(ParseTimeParameter("2023-11-14T22:13:20.123Z"), 1700000000123);
  EXPECT_EQ(ParseTimeParameter("2023-11-14T22:13:20.1234567Z"), 1700000000123);
  EXPECT_EQ(ParseTimeParameter("2023-11-15T00:13:20.5+02:00"), 1700000000500);
  EXPECT_EQ(ParseTimeParameter("2023-11-14T21:13:20-01:00"), 1700000000000);
  for (const char* bad :
       {"", "yesterday", "2023-11-14", "2023-11-14T22:13:20", "2023-02-30T00:00:00Z",
        "2023-11-14T25:00:00Z", "2023-11-14T22:13:20.Z", "2023-11-14T22:13:20+2:00", "-5"}) {
    EXPECT_FALSE(ParseTimeParameter(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace fencegate::gateway
