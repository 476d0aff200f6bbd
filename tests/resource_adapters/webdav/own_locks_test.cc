#include "resource_adapters/webdav/own_locks.h"

#include <gtest/gtest.h>

namespace fencegate::adapters::webdav {
namespace {

TEST(OwnLocks, EachRegistryHasItsOwnMark) {
  const OwnLocks a;
  const OwnLocks b;
  EXPECT_TRUE(a.owner().starts_with("fencegate-write ")) << a.owner();
  EXPECT_NE(a.owner(), b.owner());
}

TEST(OwnLocks, AHeldLockIsNoOrphanUntilReleased) {
  OwnLocks locks("mark");
  locks.Asking("/dav/a");
  locks.Answered("/dav/a", "<urn:1>");
  EXPECT_FALSE(locks.IsOrphan("/dav/a", "<urn:1>"));
  EXPECT_TRUE(locks.IsOrphan("/dav/a", "<urn:2>")) << "a token no write holds";
  locks.Released("<urn:1>");
  EXPECT_TRUE(locks.IsOrphan("/dav/a", "<urn:1>"));
}

// The server may have granted a LOCK whose answer is on its way: its token is not known yet.
TEST(OwnLocks, NothingOnAPathWithALockAwaitingItsAnswerIsAnOrphan) {
  OwnLocks locks("mark");
  locks.Asking("/dav/box/");
  EXPECT_FALSE(locks.IsOrphan("/dav/box", "<urn:1>"));
  EXPECT_FALSE(locks.IsOrphan("/dav/box/in.txt", "<urn:1>")) << "a collection's lock covers it";
  EXPECT_TRUE(locks.IsOrphan("/dav/boxes", "<urn:1>"));
  EXPECT_TRUE(locks.IsOrphan("/dav/", "<urn:1>")) << "a member's lock is not the parent's";
  locks.Asking("/dav/box/");
  locks.Answered("/dav/box/", std::nullopt);
  EXPECT_FALSE(locks.IsOrphan("/dav/box/in.txt", "<urn:1>")) << "one of two still awaited";
  locks.Answered("/dav/box/", std::nullopt);  // failed: what it was granted is an orphan
  EXPECT_TRUE(locks.IsOrphan("/dav/box/in.txt", "<urn:1>"));
}

TEST(OwnLocks, ALockAwaitedOnTheRootCoversEverything) {
  OwnLocks locks("mark");
  locks.Asking("/");
  EXPECT_FALSE(locks.IsOrphan("/dav/a", "<urn:1>"));
}

}  // namespace
}  // namespace fencegate::adapters::webdav
