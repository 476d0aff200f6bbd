#include "base/encoding/base64.h"

#include <gtest/gtest.h>

namespace fencegate::encoding {
namespace {

// RFC 4648 section 10.
constexpr std::pair<std::string_view, std::string_view> kVectors[] = {
    {"", ""},
    {"f", "Zg=="},
    {"fo", "Zm8="},
    {"foo", "Zm9v"},
    {"foob", "Zm9vYg=="},
    {"fooba", "Zm9vYmE="},
    {"foobar", "Zm9vYmFy"},
};

TEST(Base64Test, EncodesAndDecodesTheRfc4648Vectors) {
  for (const auto& [plain, encoded] : kVectors) {
    EXPECT_EQ(Base64Encode(plain), encoded);
    EXPECT_EQ(Base64Decode(encoded), std::string(plain)) << encoded;
  }
  const std::string binary("\x00\xfb\xff\x3e\x3f", 5);
  EXPECT_EQ(Base64Encode(binary), "APv/Pj8=");
  EXPECT_EQ(Base64Decode("APv/Pj8="), binary);
}

TEST(Base64Test, RefusesTextThatIsNotPaddedBase64) {
  for (std::string_view bad : {"Zg", "Zg=", "Zm9vY", "Zg=a", "Z=g=", "=Zg=", "Zg==Zg==", "Zm9v!A==",
                               "Zm9v\n", "Zm9v    ", " Zm9v   ", "Zm9v\r\n\r\n"}) {
    EXPECT_EQ(Base64Decode(bad), std::nullopt) << bad;
  }
}

TEST(Base64UrlTest, UsesTheUrlSafeAlphabetWithoutPadding) {
  // The RFC 4648 vectors without their padding, and the two characters that differ.
  for (const auto& [plain, encoded] : kVectors) {
    std::string unpadded(encoded);
    while (!unpadded.empty() && unpadded.back() == '=') unpadded.pop_back();
    EXPECT_EQ(Base64UrlEncode(plain), unpadded);
  }
  EXPECT_EQ(Base64UrlEncode(std::string_view("\x00\xfb\xff\x3e\x3f", 5)), "APv_Pj8");
  EXPECT_EQ(Base64UrlEncode(std::string(32, '\xff')).size(), 43u);
}

}  // namespace
}  // namespace fencegate::encoding
