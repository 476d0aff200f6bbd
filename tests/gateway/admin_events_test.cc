#include "gateway/admin/admin_events.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace fencegate::gateway {
namespace {

namespace json = boost::json;

LockGrantEvent JobsGrant() {
  LockGrantEvent grant;
  grant.lock = "jobs";
  return grant;
}

TEST(AdminEventsTest, EventsAreWrittenAsServerSentEventsWithTheirIds) {
  EventHub hub(8);
  lockstore::RejectionRecord record;
  record.at_ms = 1'700'000'000'000;
  record.route = "objects";
  record.reason = "stale_token";
  record.fence_key = "/objects/a";
  record.method = "PUT";
  record.path = "/objects/a\nwith a line break";
  record.has_presented = true;
  record.presented = 3;
  record.highest = 5;
  record.request_id = "req-1";
  hub.PublishRejection(record);
  hub.PublishLockGrant(
      {.lock = "jobs", .owner_id = "0123456789ab", .fencing_token = 9, .at_ms = 1'700'000'000'000});
  std::string text;
  EXPECT_EQ(AppendEvents(hub, 0, &text), 2u);
  const std::size_t split = text.find("\n\n");
  ASSERT_NE(split, std::string::npos);
  const std::string first = text.substr(0, split);
  ASSERT_TRUE(first.starts_with("id: 1\nevent: rejection\ndata: ")) << first;
  const json::value data = json::parse(first.substr(first.find("data: ") + 6));
  EXPECT_EQ(data.at("reason"), "stale_token");
  EXPECT_EQ(data.at("fence_key"), "/objects/a");
  EXPECT_EQ(data.at("presented_token"), 3);
  EXPECT_EQ(data.at("highest_token"), 5);
  EXPECT_TRUE(data.at("sequence").is_null()) << "the store numbers it later";
  EXPECT_EQ(data.at("at"), "2023-11-14T22:13:20.000Z");
  const std::string second = text.substr(split + 2);
  ASSERT_TRUE(second.starts_with("id: 2\nevent: lock_grant\ndata: ")) << second;
  EXPECT_TRUE(second.ends_with("\n\n"));
  const json::value grant = json::parse(second.substr(second.find("data: ") + 6));
  EXPECT_EQ(grant.at("lock"), "jobs");
  EXPECT_EQ(grant.at("owner_id"), "0123456789ab");
  EXPECT_EQ(grant.at("fencing_token"), 9);
  EXPECT_FALSE(grant.as_object().contains("owner_token"));
}

TEST(AdminEventsTest, NothingNewAppendsNothing) {
  EventHub hub(8);
  hub.PublishLockGrant(JobsGrant());
  std::string text;
  EXPECT_EQ(AppendEvents(hub, 1, &text), 1u);
  EXPECT_TRUE(text.empty());
}

TEST(AdminEventsTest, AStreamStartsAfterLastEventIdOrElseAfterTheNewest) {
  EventHub hub(8);
  for (int i = 0; i < 5; ++i) hub.PublishLockGrant(JobsGrant());
  EXPECT_EQ(EventStreamStart("", hub), 5u);
  EXPECT_EQ(EventStreamStart("2", hub), 2u);
  EXPECT_EQ(EventStreamStart("0", hub), 0u);
  EXPECT_EQ(EventStreamStart("x2", hub), 5u);
  EXPECT_EQ(EventStreamStart("2 ", hub), 5u);
  EXPECT_EQ(EventStreamStart("9", hub), 5u) << "an id from before a restart";
}

}  // namespace
}  // namespace fencegate::gateway
