#include "base/encoding/hex.h"

#include <array>

#include <gtest/gtest.h>

namespace fencegate::encoding {
namespace {

TEST(HexTest, EncodesEveryByteAsTwoLowerCaseDigits) {
  EXPECT_EQ(HexEncode(std::string_view("")), "");
  EXPECT_EQ(HexEncode(std::string_view("\x00\x0f\x10\xab\xff", 5)), "000f10abff");
  const std::array<unsigned char, 3> bytes{0xde, 0xad, 0x01};
  EXPECT_EQ(HexEncode(bytes), "dead01");
  std::string out = "x=";
  AppendHex("\xde\xad\x01", &out);
  EXPECT_EQ(out, "x=dead01");
}

TEST(HexTest, DecodesEitherCaseIntoAFixedSize) {
  std::array<unsigned char, 4> out{};
  ASSERT_TRUE(HexDecode("00fFaB7e", out));
  EXPECT_EQ(out, (std::array<unsigned char, 4>{0x00, 0xff, 0xab, 0x7e}));
  std::array<unsigned char, 0> none{};
  EXPECT_TRUE(HexDecode("", none));
}

TEST(HexTest, RefusesWrongLengthsAndNonDigits) {
  std::array<unsigned char, 2> out{};
  for (std::string_view bad : {"", "abc", "abcdef", "0g00", "00 0", "+0ff", "xyzw", "\0\0\0\0"}) {
    EXPECT_FALSE(HexDecode(bad, out)) << bad;
  }
}

}  // namespace
}  // namespace fencegate::encoding
