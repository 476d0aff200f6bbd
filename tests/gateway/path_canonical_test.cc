#include "gateway/http/path_canonical.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace fencegate::gateway {
namespace {

struct Canonicalised {
  PathViolation violation;
  std::string target;
  bool copied;  // the canonical target is in the scratch string, not the input
};

Canonicalised Canonicalise(std::string_view target) {
  std::string scratch;
  std::string_view canonical;
  const PathViolation violation = CanonicaliseTarget(target, &scratch, &canonical);
  return {violation, std::string(canonical), canonical.data() != target.data()};
}

TEST(PathCanonicalTest, CanonicalTargetsAreKeptAsTheyAreWithoutACopy) {
  for (const char* target :
       {"/", "/kv/a/x", "/files/", "/files/a%20b/c", "/files/caf%C3%A9", "/a/.../b", "/a/.hidden",
        "/a/b.", "/a:b@c", "/a+b", "/!$&'()*,;=", "/a%25b", "/a%3Fb", "/a%23b", "/a?x=%2f&y", "*",
        "", "http://example.com/a"}) {
    const Canonicalised result = Canonicalise(target);
    EXPECT_EQ(result.violation, PathViolation::kNone) << target;
    EXPECT_EQ(result.target, target);
    EXPECT_FALSE(result.copied) << target;
  }
}

// Each row: spellings that reach the same backend object, and the one spelling they all get.
TEST(PathCanonicalTest, EverySpellingOfAPathBecomesOne) {
  struct Row {
    std::vector<const char*> spellings;
    const char* canonical;
  };
  const std::vector<Row> rows = {
      {{"/files/a:b", "/files/a%3Ab", "/files/a%3ab"}, "/files/a:b"},
      {{"/files/caf\xC3\xA9", "/files/caf%C3%A9", "/files/caf%c3%a9", "/files/caf\xC3%a9"},
       "/files/caf%C3%A9"},
      {{"/files/a", "/files/%61"}, "/files/a"},
      {{"/files/A", "/files/%41"}, "/files/A"},
      {{"/files/a.b", "/files/a%2Eb", "/files/a%2eb"}, "/files/a.b"},
      {{"/files/a+b", "/files/a%2Bb", "/files/a%2bb"}, "/files/a+b"},
      {{"/files/a%20b", "/files/a%20b"}, "/files/a%20b"},
      {{"/files/a~_-b", "/files/a%7E%5F%2Db"}, "/files/a~_-b"},
      {{"/files/%25", "/files/%25"}, "/files/%25"},
      {{"/files/a%3Fb?q=1", "/files/a%3fb?q=1"}, "/files/a%3Fb?q=1"},
      {{"/files/a\"b", "/files/a%22b"}, "/files/a%22b"},
  };
  for (const Row& row : rows) {
    for (const char* spelling : row.spellings) {
      const Canonicalised result = Canonicalise(spelling);
      EXPECT_EQ(result.violation, PathViolation::kNone) << spelling;
      EXPECT_EQ(result.target, row.canonical) << spelling;
    }
  }
}

TEST(PathCanonicalTest, TheQueryIsKeptAsSent) {
  EXPECT_EQ(Canonicalise("/files/%61?x=%61&y=%2f").target, "/files/a?x=%61&y=%2f");
}

// NFC "é" (C3 A9) and NFD "e" + U+0301 (65 CC 81) are different bytes: different paths.
TEST(PathCanonicalTest, NfcAndNfdStayDifferent) {
  EXPECT_EQ(Canonicalise("/files/caf%C3%A9").target, "/files/caf%C3%A9");
  EXPECT_EQ(Canonicalise("/files/cafe%CC%81").target, "/files/cafe%CC%81");
}

TEST(PathCanonicalTest, RefusesSpellingsWithoutOneMeaning) {
  const std::vector<std::pair<const char*, PathViolation>> rows = {
      {"/kv/../admin", PathViolation::kDotSegment},
      {"/kv/./a", PathViolation::kDotSegment},
      {"/..", PathViolation::kDotSegment},
      {"/kv/a/..", PathViolation::kDotSegment},
      {"/kv/a/.", PathViolation::kDotSegment},
      {"/kv/%2e%2e/a", PathViolation::kDotSegment},
      {"/kv/.%2E/a", PathViolation::kDotSegment},
      {"/kv/%2e", PathViolation::kDotSegment},
      {"//", PathViolation::kEmptySegment},
      {"/a//b", PathViolation::kEmptySegment},
      {"/files//a", PathViolation::kEmptySegment},
      {"/kv/a%2Fb", PathViolation::kEncodedSeparator},
      {"/kv/a%2fb", PathViolation::kEncodedSeparator},
      {"/kv/a%5Cb", PathViolation::kEncodedSeparator},
      {"/kv/a\\b", PathViolation::kEncodedSeparator},
      {"/kv/a%00b", PathViolation::kControlByte},
      {"/kv/a%0Ab", PathViolation::kControlByte},
      {"/kv/a%1fb", PathViolation::kControlByte},
      {"/kv/a%7Fb", PathViolation::kControlByte},
      {"/kv/a\tb", PathViolation::kControlByte},
      {"/kv/a%zzb", PathViolation::kBadPercentEscape},
      {"/kv/a%2", PathViolation::kBadPercentEscape},
      {"/kv/a%", PathViolation::kBadPercentEscape},
      {"/kv/%G0/x", PathViolation::kBadPercentEscape},
      {"/files/report.csv#z", PathViolation::kFragment},
      {"/files/a?q=1#z", PathViolation::kFragment},
      {"*#", PathViolation::kFragment},
      // Overlong forms: '/' as C0 AF and E0 80 AF, '.' as C0 AE, NUL as C0 80.
      {"/files/a%C0%AFb", PathViolation::kInvalidUtf8},
      {"/files/a%E0%80%AFb", PathViolation::kInvalidUtf8},
      {"/files/%C0%AE%C0%AE", PathViolation::kInvalidUtf8},
      {"/files/a%C0%80", PathViolation::kInvalidUtf8},
      // A stray continuation byte, a cut sequence, a surrogate, a code point above U+10FFFF,
      // a sequence cut by '/', raw Latin-1.
      {"/files/%A9", PathViolation::kInvalidUtf8},
      {"/files/caf%C3", PathViolation::kInvalidUtf8},
      {"/files/%ED%A0%80", PathViolation::kInvalidUtf8},
      {"/files/%F4%90%80%80", PathViolation::kInvalidUtf8},
      {"/files/%C3/%A9", PathViolation::kInvalidUtf8},
      {"/files/caf\xE9", PathViolation::kInvalidUtf8},
      {"/files/%FF", PathViolation::kInvalidUtf8},
  };
  for (const auto& [target, violation] : rows) {
    EXPECT_EQ(Canonicalise(target).violation, violation) << target;
    EXPECT_FALSE(PathViolationDetail(violation).empty());
  }
}

TEST(PathCanonicalTest, AcceptsEveryWellFormedUtf8Length) {
  // U+0080, U+07FF, U+0800, U+FFFD, U+10000, U+10FFFF.
  for (const char* target :
       {"/%C2%80", "/%DF%BF", "/%E0%A0%80", "/%EF%BF%BD", "/%F0%90%80%80", "/%F4%8F%BF%BF"}) {
    EXPECT_EQ(Canonicalise(target).violation, PathViolation::kNone) << target;
  }
}

TEST(PathCanonicalTest, CanonicalisingTwiceChangesNothing) {
  for (const char* target : {"/files/%61%c3%a9:%3a+%2B", "/x/caf\xC3\xA9/%7e?q=%61"}) {
    const Canonicalised once = Canonicalise(target);
    ASSERT_EQ(once.violation, PathViolation::kNone) << target;
    const Canonicalised twice = Canonicalise(once.target);
    EXPECT_EQ(twice.violation, PathViolation::kNone);
    EXPECT_EQ(twice.target, once.target);
    EXPECT_FALSE(twice.copied);
  }
}

}  // namespace
}  // namespace fencegate::gateway
