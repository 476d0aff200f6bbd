#include "gateway/http/request_id.h"

#include <set>

#include <gtest/gtest.h>

namespace fencegate::gateway {
namespace {

TEST(RequestIdTest, AcceptsVisibleAsciiUpTo128) {
  EXPECT_TRUE(IsAcceptableRequestId("abc-123_XYZ"));
  EXPECT_TRUE(IsAcceptableRequestId(std::string(128, 'a')));
  EXPECT_FALSE(IsAcceptableRequestId(std::string(129, 'a')));
  EXPECT_FALSE(IsAcceptableRequestId(""));
  EXPECT_FALSE(IsAcceptableRequestId("has space"));
  EXPECT_FALSE(IsAcceptableRequestId("line\nbreak"));
  EXPECT_FALSE(IsAcceptableRequestId("caf\xc3\xa9"));
}

TEST(RequestIdTest, GeneratesDistinct128BitHexIds) {
  RequestIdGenerator generator;
  std::set<std::string> seen;
  std::string id;
  for (int i = 0; i < 1000; ++i) {
    generator.Generate(&id);
    ASSERT_EQ(id.size(), 32u);
    ASSERT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

}  // namespace
}  // namespace fencegate::gateway
