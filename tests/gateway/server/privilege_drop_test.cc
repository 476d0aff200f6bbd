#include "gateway/server/privilege_drop.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace fencegate::gateway {
namespace {

std::string CurrentUserName() {
  const passwd* entry = ::getpwuid(::geteuid());
  return entry != nullptr ? entry->pw_name : "";
}

TEST(PrivilegeDropTest, NoUserIsInactive) {
  PrivilegeDrop drop;
  ASSERT_TRUE(PrivilegeDrop::Plan("", "", &drop).ok());
  EXPECT_FALSE(drop.active());
  // Every step is then a no-op that succeeds, whoever runs it.
  EXPECT_TRUE(drop.ActAsUser().ok());
  EXPECT_TRUE(drop.RegainRootToBind().ok());
  EXPECT_TRUE(drop.DropForGood().ok());
}

TEST(PrivilegeDropTest, ResolvesNamesAndNumericIds) {
  const passwd* nobody = ::getpwnam("nobody");
  ASSERT_NE(nobody, nullptr) << "Debian always has the user nobody";
  PrivilegeDrop by_name;
  ASSERT_TRUE(PrivilegeDrop::Resolve("nobody", "", &by_name).ok());
  EXPECT_EQ(by_name.uid(), nobody->pw_uid);
  EXPECT_EQ(by_name.gid(), nobody->pw_gid);  // the user's primary group by default

  PrivilegeDrop by_id;
  ASSERT_TRUE(PrivilegeDrop::Resolve(std::to_string(nobody->pw_uid), "0", &by_id).ok());
  EXPECT_EQ(by_id.uid(), nobody->pw_uid);
  EXPECT_EQ(by_id.gid(), 0u);
}

TEST(PrivilegeDropTest, UnknownUserOrGroupIsAnErrorNamingIt) {
  PrivilegeDrop drop;
  const lockstore::Status user = PrivilegeDrop::Resolve("no-such-user-fg", "", &drop);
  ASSERT_FALSE(user.ok());
  EXPECT_NE(user.message().find("user 'no-such-user-fg'"), std::string::npos) << user.message();
  const lockstore::Status group = PrivilegeDrop::Resolve("nobody", "no-such-group-fg", &drop);
  ASSERT_FALSE(group.ok());
  EXPECT_NE(group.message().find("group 'no-such-group-fg'"), std::string::npos) << group.message();
}

TEST(PrivilegeDropTest, TheCurrentUserIsANoOp) {
  const std::string me = CurrentUserName();
  ASSERT_FALSE(me.empty());
  PrivilegeDrop drop;
  ASSERT_TRUE(PrivilegeDrop::Plan(me, "", &drop).ok());
  EXPECT_FALSE(drop.active());
}

TEST(PrivilegeDropTest, AnotherUserWithoutRootIsRefused) {
  if (::geteuid() == 0) GTEST_SKIP() << "runs as root, which may become another user";
  PrivilegeDrop drop;
  const lockstore::Status planned = PrivilegeDrop::Plan("nobody", "", &drop);
  ASSERT_FALSE(planned.ok());
  EXPECT_NE(planned.message().find("only root can change its user"), std::string::npos)
      << planned.message();
}

// The three steps in a child process, which keeps what it became: each step's outcome is its
// exit code.
TEST(PrivilegeDropTest, RootActsAsTheUserRegainsRootToBindThenDropsForGood) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (CI runs as root)";
  const passwd* nobody = ::getpwnam("nobody");
  ASSERT_NE(nobody, nullptr);
  const uid_t uid = nobody->pw_uid;
  const gid_t gid = nobody->pw_gid;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    PrivilegeDrop drop;
    if (!PrivilegeDrop::Plan("nobody", "", &drop).ok() || !drop.active()) ::_exit(10);
    if (!drop.ActAsUser().ok() || ::geteuid() != uid || ::getegid() != gid) ::_exit(11);
    if (::getuid() != 0) ::_exit(12);  // only the effective ids changed
    if (!drop.RegainRootToBind().ok() || ::geteuid() != 0) ::_exit(13);
    if (!drop.DropForGood().ok()) ::_exit(14);
    uid_t r = 0, e = 0, s = 0;
    gid_t rg = 0, eg = 0, sg = 0;
    ::getresuid(&r, &e, &s);
    ::getresgid(&rg, &eg, &sg);
    if (r != uid || e != uid || s != uid || rg != gid || eg != gid || sg != gid) ::_exit(15);
    if (::setuid(0) == 0 || ::seteuid(0) == 0) ::_exit(16);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child failed at step " << WEXITSTATUS(status);
}

}  // namespace
}  // namespace fencegate::gateway
