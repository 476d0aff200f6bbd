#include "gateway/auth/console_sessions.h"

#include <gtest/gtest.h>

#include <set>

namespace fencegate::gateway::auth {
namespace {

using Clock = ConsoleSessions::Clock;
using std::chrono::seconds;

TEST(ConsoleSessionsTest, ASessionStandsForItsPrincipalUntilItExpires) {
  ConsoleSessions sessions(seconds(60), 8);
  const Clock::time_point now = Clock::now();
  const std::optional<std::string> id = sessions.Create("alice", now);
  ASSERT_TRUE(id);
  EXPECT_EQ(id->size(), 32u);
  const ConsoleSessions::Session* session = sessions.Find(*id, now + seconds(59));
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->principal, "alice");
  EXPECT_EQ(session->csrf_token.size(), 32u);
  EXPECT_NE(session->csrf_token, *id);
  EXPECT_EQ(sessions.Find(*id, now + seconds(60)), nullptr);
  EXPECT_EQ(sessions.size(), 0u) << "an expired session is dropped when seen";
}

TEST(ConsoleSessionsTest, UnknownEmptyAndRemovedIdsFindNothing) {
  ConsoleSessions sessions(seconds(60), 8);
  const Clock::time_point now = Clock::now();
  const std::string id = *sessions.Create("alice", now);
  EXPECT_EQ(sessions.Find("", now), nullptr);
  EXPECT_EQ(sessions.Find(std::string(32, '0'), now), nullptr);
  EXPECT_EQ(sessions.Find(id.substr(0, 31), now), nullptr);
  sessions.Remove(id);
  EXPECT_EQ(sessions.Find(id, now), nullptr);
}

TEST(ConsoleSessionsTest, IdsAndTokensAreFreshEachTime) {
  ConsoleSessions sessions(seconds(60), 64);
  const Clock::time_point now = Clock::now();
  std::set<std::string> seen;
  for (int i = 0; i < 32; ++i) {
    const std::string id = *sessions.Create("alice", now);
    EXPECT_TRUE(seen.insert(id).second);
    EXPECT_TRUE(seen.insert(sessions.Find(id, now)->csrf_token).second);
  }
}

TEST(ConsoleSessionsTest, TheSessionClosestToExpiryGivesWayWhenFull) {
  ConsoleSessions sessions(seconds(60), 2);
  const Clock::time_point now = Clock::now();
  const std::string first = *sessions.Create("alice", now);
  const std::string second = *sessions.Create("bob", now + seconds(1));
  const std::string third = *sessions.Create("carol", now + seconds(2));
  EXPECT_EQ(sessions.size(), 2u);
  EXPECT_EQ(sessions.Find(first, now + seconds(2)), nullptr);
  ASSERT_NE(sessions.Find(second, now + seconds(2)), nullptr);
  ASSERT_NE(sessions.Find(third, now + seconds(2)), nullptr);
}

TEST(ConsoleSessionsTest, ExpiredSessionsMakeRoomBeforeLiveOnesAreEvicted) {
  ConsoleSessions sessions(seconds(10), 2);
  const Clock::time_point now = Clock::now();
  (void)sessions.Create("alice", now);
  const std::string live = *sessions.Create("bob", now + seconds(5));
  const std::string late = *sessions.Create("carol", now + seconds(11));
  EXPECT_NE(sessions.Find(live, now + seconds(11)), nullptr);
  EXPECT_NE(sessions.Find(late, now + seconds(11)), nullptr);
}

TEST(CookieValueTest, FindsTheNamedCookieAmongOthers) {
  EXPECT_EQ(CookieValue("fencegate_session=abc", "fencegate_session"), "abc");
  EXPECT_EQ(CookieValue("a=1; fencegate_session=abc; b=2", "fencegate_session"), "abc");
  EXPECT_EQ(CookieValue("a=1;fencegate_session=abc", "fencegate_session"), "abc");
  EXPECT_EQ(CookieValue("xfencegate_session=abc", "fencegate_session"), "");
  EXPECT_EQ(CookieValue("fencegate_session", "fencegate_session"), "");
  EXPECT_EQ(CookieValue("", "fencegate_session"), "");
}

}  // namespace
}  // namespace fencegate::gateway::auth
