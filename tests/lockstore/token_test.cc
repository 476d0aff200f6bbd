#include "lockstore/tokens/token.h"

#include <gtest/gtest.h>

#include <string>

namespace fencegate::lockstore {
namespace {

TEST(ParseTokenTest, AcceptsDigits) {
  EXPECT_EQ(ParseToken("0"), Token{0});
  EXPECT_EQ(ParseToken("1"), Token{1});
  EXPECT_EQ(ParseToken("42"), Token{42});
  EXPECT_EQ(ParseToken("1234567890123"), Token{1234567890123});
}

TEST(ParseTokenTest, AcceptsMaxToken) {
  EXPECT_EQ(ParseToken("9223372036854775807"), kMaxToken);
  EXPECT_EQ(ParseToken("0009223372036854775807"), kMaxToken);
}

TEST(ParseTokenTest, AcceptsLeadingZeros) {
  EXPECT_EQ(ParseToken("007"), Token{7});
  EXPECT_EQ(ParseToken("0000000000000000000000000000000000"), Token{0});
}

TEST(ParseTokenTest, AcceptsOptionalWhitespaceAround) {
  EXPECT_EQ(ParseToken(" 5"), Token{5});
  EXPECT_EQ(ParseToken("5 "), Token{5});
  EXPECT_EQ(ParseToken("\t 12 \t"), Token{12});
}

TEST(ParseTokenTest, RefusesEmptyAndBlank) {
  EXPECT_EQ(ParseToken(""), std::nullopt);
  EXPECT_EQ(ParseToken(" "), std::nullopt);
  EXPECT_EQ(ParseToken(" \t "), std::nullopt);
}

TEST(ParseTokenTest, RefusesSigns) {
  EXPECT_EQ(ParseToken("+1"), std::nullopt);
  EXPECT_EQ(ParseToken("-1"), std::nullopt);
  EXPECT_EQ(ParseToken("-0"), std::nullopt);
}

TEST(ParseTokenTest, RefusesHexAndOtherNotation) {
  EXPECT_EQ(ParseToken("0x10"), std::nullopt);
  EXPECT_EQ(ParseToken("1e3"), std::nullopt);
  EXPECT_EQ(ParseToken("1.0"), std::nullopt);
  EXPECT_EQ(ParseToken("12abc"), std::nullopt);
}

TEST(ParseTokenTest, RefusesInnerWhitespaceAndLists) {
  EXPECT_EQ(ParseToken("1 2"), std::nullopt);
  EXPECT_EQ(ParseToken("1\t2"), std::nullopt);
  EXPECT_EQ(ParseToken("1,2"), std::nullopt);
  EXPECT_EQ(ParseToken("1, 2"), std::nullopt);
  EXPECT_EQ(ParseToken(",1"), std::nullopt);
}

TEST(ParseTokenTest, RefusesOtherWhitespaceThanOws) {
  EXPECT_EQ(ParseToken("\n1"), std::nullopt);
  EXPECT_EQ(ParseToken("1\r"), std::nullopt);
  EXPECT_EQ(ParseToken(std::string("1\0", 2)), std::nullopt);
}

TEST(ParseTokenTest, RefusesOverflow) {
  EXPECT_EQ(ParseToken("9223372036854775808"), std::nullopt);             // kMaxToken + 1
  EXPECT_EQ(ParseToken("18446744073709551615"), std::nullopt);            // 2^64 - 1
  EXPECT_EQ(ParseToken("18446744073709551616"), std::nullopt);            // 2^64: would wrap to 0
  EXPECT_EQ(ParseToken("123456789012345678901234567890"), std::nullopt);  // 30 digits
}

TEST(ParseTokenTest, RefusesNonAsciiDigits) {
  EXPECT_EQ(ParseToken("\xd9\xa1"), std::nullopt);       // ARABIC-INDIC DIGIT ONE
  EXPECT_EQ(ParseToken("\xef\xbc\x91"), std::nullopt);   // FULLWIDTH DIGIT ONE
  EXPECT_EQ(ParseToken("1\xef\xbc\x92"), std::nullopt);  // 1 then FULLWIDTH DIGIT TWO
  EXPECT_EQ(ParseToken("\xc2\xa0"
                       "1"),
            std::nullopt);  // NO-BREAK SPACE is not OWS
}

}  // namespace
}  // namespace fencegate::lockstore
