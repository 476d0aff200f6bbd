#include "gateway/path_canonical.h"

#include <gtest/gtest.h>

namespace fencegate::gateway {
namespace {

TEST(PathCanonicalTest, AcceptsOrdinaryPaths) {
  for (const char* path : {"/", "/kv/a/x", "/files/", "/files/a%20b/c%2Fd", "/files/%C3%A9t%C3%A9",
                           "/a/.../b", "/a/.hidden", "/a/b.", "/a//b", "/a%25", "*", ""}) {
    EXPECT_EQ(CheckCanonicalPath(path), PathViolation::kNone) << path;
  }
}

TEST(PathCanonicalTest, RefusesDotSegmentsRawOrEncoded) {
  for (const char* path : {"/kv/../admin", "/kv/./a", "/..", "/kv/a/..", "/kv/%2e%2e/a",
                           "/kv/%2E%2E/a", "/kv/.%2e/a", "/kv/%2e/a", "/kv/a/%2E"}) {
    EXPECT_EQ(CheckCanonicalPath(path), PathViolation::kDotSegment) << path;
  }
}

TEST(PathCanonicalTest, RefusesNulAndBrokenEscapes) {
  EXPECT_EQ(CheckCanonicalPath("/kv/a%00b"), PathViolation::kNul);
  for (const char* path : {"/kv/a%zzb", "/kv/a%2", "/kv/a%", "/kv/%G0/x", "/kv/a%2/b"}) {
    EXPECT_EQ(CheckCanonicalPath(path), PathViolation::kBadPercentEscape) << path;
  }
}

// Each resource has one spelling, so it has one fence key.
TEST(PathCanonicalTest, RefusesSecondSpellingsOfTheSamePath) {
  for (const char* path :
       {"/kv/%61/x", "/kv/a%2Db", "/kv/%7E", "/kv/%30", "/kv/a%2e", "/kv/%5Fx"}) {
    EXPECT_EQ(CheckCanonicalPath(path), PathViolation::kEncodedUnreserved) << path;
  }
  for (const char* path : {"/kv/a%2fb", "/files/%c3%a9", "/kv/a%2Fb%3a"}) {
    EXPECT_EQ(CheckCanonicalPath(path), PathViolation::kLowercaseEscape) << path;
  }
}

TEST(PathCanonicalTest, EveryViolationHasADetail) {
  for (PathViolation violation :
       {PathViolation::kBadPercentEscape, PathViolation::kNul, PathViolation::kDotSegment,
        PathViolation::kEncodedUnreserved, PathViolation::kLowercaseEscape}) {
    EXPECT_FALSE(PathViolationDetail(violation).empty());
  }
}

}  // namespace
}  // namespace fencegate::gateway
