#include "gateway/auth/api_key.h"

#include <gtest/gtest.h>

namespace fencegate::gateway::auth {
namespace {

// `printf %s abc | sha256sum`
constexpr std::string_view kAbcHex =
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

TEST(ApiKeyTest, DigestIsSha256OfTheKeyBytes) {
  KeyDigest expected;
  ASSERT_TRUE(ParseKeyDigestHex(kAbcHex, &expected));
  EXPECT_TRUE(DigestsEqual(DigestApiKey("abc"), expected));
  EXPECT_FALSE(DigestsEqual(DigestApiKey("abd"), expected));
  EXPECT_FALSE(DigestsEqual(DigestApiKey("abc\n"), expected));  // echo adds a newline
}

TEST(ApiKeyTest, HexDigestsOfEitherCaseAndNothingElse) {
  KeyDigest lower;
  KeyDigest upper;
  ASSERT_TRUE(ParseKeyDigestHex(kAbcHex, &lower));
  std::string upper_hex(kAbcHex);
  for (char& c : upper_hex) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  ASSERT_TRUE(ParseKeyDigestHex(upper_hex, &upper));
  EXPECT_TRUE(DigestsEqual(lower, upper));
  KeyDigest ignored;
  EXPECT_FALSE(ParseKeyDigestHex(kAbcHex.substr(1), &ignored));           // 63 digits
  EXPECT_FALSE(ParseKeyDigestHex(std::string(kAbcHex) + "0", &ignored));  // 65 digits
  EXPECT_FALSE(ParseKeyDigestHex(std::string(63, '0') + "g", &ignored));
  EXPECT_FALSE(ParseKeyDigestHex("", &ignored));
}

TEST(ApiKeyTest, BearerFieldForms) {
  EXPECT_EQ(ParseBearer("Bearer abc"), "abc");
  EXPECT_EQ(ParseBearer("bearer abc"), "abc");
  EXPECT_EQ(ParseBearer("BEARER  a-b.c_d~e+f/g=="), "a-b.c_d~e+f/g==");
  EXPECT_EQ(ParseBearer("Bearer"), std::nullopt);
  EXPECT_EQ(ParseBearer("Bearer "), std::nullopt);
  EXPECT_EQ(ParseBearer("Bearerabc"), std::nullopt);
  EXPECT_EQ(ParseBearer("Basic dXNlcjpwYXNz"), std::nullopt);
  EXPECT_EQ(ParseBearer("Bearer a b"), std::nullopt);
  EXPECT_EQ(ParseBearer("Bearer =abc"), std::nullopt);
  EXPECT_EQ(ParseBearer("Bearer ab=c"), std::nullopt);
  EXPECT_EQ(ParseBearer("Bearer a,b"), std::nullopt);
}

}  // namespace
}  // namespace fencegate::gateway::auth
