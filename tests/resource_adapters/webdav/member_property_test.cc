#include "resource_adapters/webdav/member_property.h"

#include <gtest/gtest.h>

namespace fencegate::adapters::webdav {
namespace {

TEST(MemberPropertyTest, NamesTheParentAndTheMemberInHex) {
  const auto file = MemberPropertyOf("/dav/dir/a.txt");
  ASSERT_TRUE(file);
  EXPECT_EQ(file->parent, "/dav/dir/");
  EXPECT_EQ(file->property, "member-612e747874");  // "a.txt"
  const auto collection = MemberPropertyOf("/dav/dir/");
  ASSERT_TRUE(collection);
  EXPECT_EQ(collection->parent, "/dav/");
  EXPECT_EQ(collection->property, "member-646972");  // "dir"
  EXPECT_EQ(MemberPropertyOf("/dav/dir")->property, collection->property);
  EXPECT_EQ(MemberPropertyOf("/top")->parent, "/");
}

TEST(MemberPropertyTest, EncodingsOfOneNameShareOneProperty) {
  EXPECT_EQ(MemberPropertyOf("/dav/%61.txt")->property, MemberPropertyOf("/dav/a.txt")->property);
  EXPECT_EQ(MemberPropertyOf("/dav/a%20b")->property, "member-612062");
  // Not an escape: kept as written.
  EXPECT_EQ(MemberPropertyOf("/dav/%zz")->property, "member-257a7a");
  EXPECT_EQ(MemberPropertyOf("/dav/%4")->property, "member-2534");
}

TEST(MemberPropertyTest, TheRootAndRelativePathsHaveNone) {
  EXPECT_FALSE(MemberPropertyOf("/"));
  EXPECT_FALSE(MemberPropertyOf("//"));
  EXPECT_FALSE(MemberPropertyOf(""));
  EXPECT_FALSE(MemberPropertyOf("dav/a"));
}

}  // namespace
}  // namespace fencegate::adapters::webdav
