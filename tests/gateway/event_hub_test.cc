#include "gateway/events/event_hub.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace fencegate::gateway {
namespace {

lockstore::RejectionRecord HubRejectionOf(std::string fence_key) {
  lockstore::RejectionRecord record;
  record.fence_key = std::move(fence_key);
  record.reason = "stale_token";
  return record;
}

const std::string& HubFenceKeyOf(const HubEvent& event) {
  return std::get<lockstore::RejectionRecord>(event.payload).fence_key;
}

TEST(EventHubTest, EventsGetIncreasingIdsAndComeBackInOrder) {
  EventHub hub(8);
  EXPECT_EQ(hub.LastId(), 0u);
  EXPECT_TRUE(hub.After(0, 10).empty());
  hub.PublishRejection(HubRejectionOf("a"));
  hub.PublishLockGrant({.lock = "jobs", .owner_id = "abc", .fencing_token = 7, .at_ms = 1});
  hub.PublishRejection(HubRejectionOf("b"));
  EXPECT_EQ(hub.LastId(), 3u);
  const std::vector<HubEvent> events = hub.After(0, 10);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].id, 1u);
  EXPECT_EQ(HubFenceKeyOf(events[0]), "a");
  EXPECT_EQ(std::get<LockGrantEvent>(events[1].payload).fencing_token, 7u);
  EXPECT_EQ(HubFenceKeyOf(events[2]), "b");
  const std::vector<HubEvent> later = hub.After(2, 10);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].id, 3u);
  EXPECT_TRUE(hub.After(3, 10).empty());
}

TEST(EventHubTest, TheRingKeepsOnlyTheNewestCapacityEvents) {
  EventHub hub(4);
  for (int i = 0; i < 10; ++i) hub.PublishRejection(HubRejectionOf(std::to_string(i)));
  const std::vector<HubEvent> events = hub.After(0, 100);
  ASSERT_EQ(events.size(), 4u) << "a reader further behind misses the overwritten events";
  EXPECT_EQ(events.front().id, 7u);
  EXPECT_EQ(HubFenceKeyOf(events.front()), "6");
  EXPECT_EQ(events.back().id, 10u);
  EXPECT_EQ(HubFenceKeyOf(events.back()), "9");
}

TEST(EventHubTest, AfterHandsOutTheOldestMaxEventsSoAReaderCatchesUpInOrder) {
  EventHub hub(16);
  for (int i = 0; i < 10; ++i) hub.PublishRejection(HubRejectionOf(std::to_string(i)));
  std::vector<HubEvent> events = hub.After(2, 3);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].id, 3u);
  EXPECT_EQ(events[2].id, 5u);
  events = hub.After(events.back().id, 100);
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events.back().id, 10u);
}

TEST(EventHubTest, ConcurrentPublishersLoseNothingTheRingCanHold) {
  constexpr int kThreads = 4;
  constexpr int kEach = 200;
  EventHub hub(kThreads * kEach);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&hub, t] {
      for (int i = 0; i < kEach; ++i) hub.PublishRejection(HubRejectionOf(std::to_string(t)));
    });
  }
  for (std::thread& thread : threads) thread.join();
  const std::vector<HubEvent> events = hub.After(0, kThreads * kEach);
  ASSERT_EQ(events.size(), static_cast<std::size_t>(kThreads * kEach));
  for (std::size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].id, i + 1);
}

}  // namespace
}  // namespace fencegate::gateway
