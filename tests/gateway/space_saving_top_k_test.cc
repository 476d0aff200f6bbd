#include "gateway/observability/space_saving_top_k.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace fencegate::gateway {
namespace {

TEST(SpaceSavingTopKTest, CountsExactlyWhileEveryKeyFits) {
  SpaceSavingTopK top(4);
  for (int i = 0; i < 5; ++i) top.Offer("a");
  for (int i = 0; i < 3; ++i) top.Offer("b");
  top.Offer("c");
  const auto entries = top.Top(2);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].key, "a");
  EXPECT_EQ(entries[0].count, 5u);
  EXPECT_EQ(entries[0].error, 0u);
  EXPECT_EQ(entries[1].key, "b");
  EXPECT_EQ(entries[1].count, 3u);
  EXPECT_EQ(top.Top(10).size(), 3u);
}

TEST(SpaceSavingTopKTest, KeepsTheHeavyKeysAmongManyLightOnesInBoundedCounters) {
  SpaceSavingTopK top(16);
  // Two heavy hitters among 1,000 keys seen once each: 1,350 offers, so any key seen more than
  // 1350 / 16 (84) times is kept, and the light keys' counters stay at most one above that.
  for (int i = 0; i < 1000; ++i) {
    top.Offer("light-" + std::to_string(i));
    if (i % 4 == 0) top.Offer("zombie");
    if (i % 10 == 0) top.Offer("second");
  }
  const auto entries = top.Top(10);
  EXPECT_EQ(top.Top(100).size(), 16u);  // never more than the counters
  ASSERT_GE(entries.size(), 2u);
  EXPECT_EQ(entries[0].key, "zombie");
  EXPECT_GE(entries[0].count, 250u);                     // an upper bound of the true count ...
  EXPECT_LE(entries[0].count - entries[0].error, 250u);  // ... and count - error a lower one
  EXPECT_EQ(entries[1].key, "second");
  EXPECT_GE(entries[1].count, 100u);
}

TEST(SpaceSavingTopKTest, RefusalTopsCountKeysAndClientsApartAndSkipEmptyOnes) {
  RefusalTops tops;
  tops.Count("files:/a", "10.0.0.1");
  tops.Count("files:/a", "10.0.0.2");
  tops.Count("", "10.0.0.1");
  const auto keys = tops.fence_keys().Top(10);
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys[0].key, "files:/a");
  EXPECT_EQ(keys[0].count, 2u);
  const auto clients = tops.clients().Top(10);
  ASSERT_EQ(clients.size(), 2u);
  EXPECT_EQ(clients[0].key, "10.0.0.1");
  EXPECT_EQ(clients[0].count, 2u);
}

TEST(SpaceSavingTopKTest, ConcurrentOffersLoseNothing) {
  SpaceSavingTopK top(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&top] {
      for (int i = 0; i < 1000; ++i) top.Offer("k");
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(top.Top(1).at(0).count, 4000u);
}

}  // namespace
}  // namespace fencegate::gateway
