#include "base/encoding/percent.h"

#include <gtest/gtest.h>

namespace fencegate::encoding {
namespace {

TEST(PercentDecodeTest, DecodesEscapesInEitherCase) {
  EXPECT_EQ(PercentDecode(""), "");
  EXPECT_EQ(PercentDecode("plain/text"), "plain/text");
  EXPECT_EQ(PercentDecode("a%20b%2fc%2F"), "a b/c/");
  EXPECT_EQ(PercentDecode("%e2%82%AC"), "\xe2\x82\xac");
  EXPECT_EQ(PercentDecode("%00"), std::string(1, '\0'));
  EXPECT_EQ(PercentDecode("%25zz"), "%zz");
}

TEST(PercentDecodeTest, KeepsPlusAndOtherBytesAsSent) {
  EXPECT_EQ(PercentDecode("a+b"), "a+b");
  EXPECT_EQ(PercentDecode("sp ace?&=#"), "sp ace?&=#");
}

TEST(PercentDecodeTest, RefusesAPercentWithoutTwoHexDigits) {
  for (std::string_view bad : {"%", "%4", "a%", "a%2", "%zz", "%4g", "%%41", "ok%2 "}) {
    EXPECT_EQ(PercentDecode(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace fencegate::encoding
