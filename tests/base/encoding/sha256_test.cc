#include "base/encoding/sha256.h"

#include <gtest/gtest.h>

#include "base/encoding/hex.h"

namespace fencegate::encoding {
namespace {

// FIPS 180-2 appendix B.1 and B.2, and the digest of nothing.
constexpr std::string_view kAbc =
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
constexpr std::string_view kTwoBlocks =
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
constexpr std::string_view kEmpty =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

TEST(Sha256Test, OneShotDigestsMatchTheStandardVectors) {
  EXPECT_EQ(Sha256Hex("abc"), kAbc);
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"), kTwoBlocks);
  EXPECT_EQ(Sha256Hex(""), kEmpty);
  EXPECT_EQ(HexEncode(Sha256Of("abc")), kAbc);
  EXPECT_EQ(HexEncode(DigestSha256("abc")), kAbc);
}

TEST(Sha256Test, StreamedDigestEqualsTheOneShotDigest) {
  Sha256 streamed;
  streamed.Update("a", 1);
  streamed.Update("", 0);
  streamed.Update("bc", 2);
  EXPECT_EQ(HexEncode(streamed.Final()), kAbc);
  streamed.Reset();
  EXPECT_EQ(HexEncode(streamed.Final()), kEmpty);
  Sha256 moved = std::move(streamed);
  moved.Reset();
  moved.Update("abc", 3);
  EXPECT_EQ(moved.Final(), Sha256Of("abc"));
}

TEST(HmacSha256Test, MatchesRfc4231) {
  // Test cases 1 and 2; case 6 for a key longer than the block size.
  EXPECT_EQ(HexEncode(HmacSha256(std::string(20, '\x0b'), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(HexEncode(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(HexEncode(HmacSha256(std::string(131, '\xaa'),
                                 "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

}  // namespace
}  // namespace fencegate::encoding
